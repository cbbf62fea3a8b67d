#include "observation_flags.hpp"

namespace strom::cli {

namespace {

/// Bounds of --stall-warning: below 100 ms a busy machine's scheduling hiccups would read as
/// stalls (a node reports its progress every 250 ms); beyond a day nobody waits for a warning.
constexpr std::chrono::milliseconds min_stall_warning{100};
constexpr std::chrono::milliseconds max_stall_warning = std::chrono::hours(24);

} // namespace

command_spec with_observation_options(command_spec spec) {
  spec.options.push_back({"metrics-listen", "HOST:PORT",
                          "serve Prometheus metrics at http://HOST:PORT/metrics (port 0: a "
                          "free port, named in the log)"});
  return spec;
}

command_spec with_timeline_option(command_spec spec) {
  spec.options.push_back({"timeline", "FILE",
                          "write what every worker and relay did when as a Chrome trace "
                          "(chrome://tracing, Perfetto) to FILE at the end"});
  return spec;
}

result<runtime::observation_options> read_observation_flags(const arguments& args) {
  runtime::observation_options options;
  if (args.has("timeline")) {
    options.timeline_path = args.get("timeline").value_or("");
    if (options.timeline_path.empty())
      return error{"--timeline must name a file"};
  }
  if (args.has("metrics-listen")) {
    auto where = args.get_endpoint("metrics-listen");
    if (!where)
      return where.err();
    options.metrics_listen = *where;
  }
  return options;
}

command_spec with_stall_option(command_spec spec) {
  spec.options.push_back({"stall-warning", "DURATION",
                          "name the node a job waits for (log and `strom status`) once steps "
                          "stand still this long (default 10s; e.g. 2s, 500ms)"});
  return spec;
}

result<void> read_stall_warning(const arguments& args, actors::timing& timeouts) {
  auto warning = args.get_duration("stall-warning", min_stall_warning, max_stall_warning);
  if (!warning)
    return warning.err();
  if (auto value = warning.value())
    timeouts.stall_warning = *value;
  return success();
}

} // namespace strom::cli
