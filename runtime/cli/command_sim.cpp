#include <fmt/format.h>

#include <fstream>
#include <string_view>
#include <vector>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "strom/runtime/job/output_paths.hpp"
#include "strom/runtime/job/progress_display.hpp"
#include "strom/runtime/report/html_page.hpp"
#include "strom/runtime/sim/calibrate.hpp"
#include "strom/runtime/sim/calibration.hpp"
#include "strom/runtime/sim/run_scenario.hpp"
#include "strom/runtime/sim/sim_report_page.hpp"
#include "options/tls_flags.hpp"

namespace strom::cli {

namespace {

const command_spec sim_spec{
  "strom sim SCENARIO [options]",
  "Runs a simulation scenario (Cap'n Proto text, schema/scenario.capnp; see examples/sim)\n"
  "and checks its expectations: exit 0 when all hold, 1 naming those that do not.\n"
  "Live mode trains with strom's own actors in virtual time; model mode is a discrete-event\n"
  "model of the cluster. With --tls-*, every simulated node presents that (node) certificate\n"
  "and the links are TLS connections: made and used for real in live mode, their bytes and\n"
  "costs modelled in model mode.\n"
  "'strom sim calibrate JOB [-o FILE]' measures this machine's costs for a job.",
  with_tls_options({
    {"seed", "S", "seed of the run's random draws (default: the job's training.seed)"},
    {"mode", "MODE", "live or model: overrides the scenario's mode"},
    {"report-out", "FILE", "write the report, one JSON object"},
    {"trace-out", "FILE", "write the event trace, one JSON object a line"},
    {"html-out", "FILE", "write the report as a self-contained HTML page with charts"},
  }),
  1,
};

const command_spec calibrate_spec{
  "strom sim calibrate JOB [-o FILE]",
  "Measures this machine's costs for a job with the real compute library (a step on its\n"
  "model and data, the density its threshold settles at, frame sizes and encode and decode\n"
  "times at several densities, sealing and opening TLS records) in a few seconds, and writes\n"
  "a calibration file (Cap'n Proto text, schema/scenario.capnp Calibration) that scenarios\n"
  "name in costs.calibration.",
  {
    {"out", "FILE", "write the calibration here (also -o); default: print it"},
  },
  1,
};

int run_calibrate(int argc, char** argv) {
  // -o is the usual short form of an output file; the parser takes --long options only.
  std::vector<std::string> words;
  for (int i = 0; i < argc; ++i)
    words.emplace_back(std::string_view{argv[i]} == "-o" ? "--out" : argv[i]);
  std::vector<char*> pointers;
  for (auto& w : words)
    pointers.push_back(w.data());
  auto parsed = parse_command(calibrate_spec, "strom sim calibrate",
                              static_cast<int>(pointers.size()), pointers.data());
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  const auto out = args->get("out");
  if (out) {
    if (auto ok = runtime::check_writable_file(*out, "--out"); !ok) {
      fmt::print(stderr, "strom sim calibrate: {}\n", ok.err().message);
      return exit_failure;
    }
  }
  auto job = runtime::load_job_file(args->positionals()[0]);
  if (!job) {
    fmt::print(stderr, "strom sim calibrate: {}\n", job.err().message);
    return exit_failure;
  }
  auto measured = runtime::sim::calibrate(*job);
  if (!measured) {
    fmt::print(stderr, "strom sim calibrate: {}\n", measured.err().message);
    return exit_failure;
  }
  const auto text =
    "# strom sim calibrate " + args->positionals()[0] + " (schema/scenario.capnp Calibration)\n"
    + runtime::sim::to_text((*measured)->getRoot<schema::Calibration>().asReader()) + "\n";
  if (!out) {
    fmt::print("{}", text);
    return exit_ok;
  }
  std::ofstream file{*out, std::ios::trunc};
  if (!(file << text) || !file.flush()) {
    fmt::print(stderr, "strom sim calibrate: {}: cannot write the calibration\n", *out);
    return exit_failure;
  }
  return exit_ok;
}

} // namespace

int run_sim(int argc, char** argv) {
  if (argc >= 1 && std::string_view{argv[0]} == "calibrate")
    return run_calibrate(argc - 1, argv + 1);
  auto parsed = parse_command(sim_spec, "strom sim", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  runtime::sim::run_options options;
  auto seed = args->get_uint("seed", 0, UINT64_MAX);
  if (!seed) {
    fmt::print(stderr, "strom sim: {}\n", seed.err().message);
    return exit_usage;
  }
  options.seed = *seed;
  if (auto mode = args->get("mode")) {
    auto parsed_mode = runtime::sim::parse_sim_mode(*mode);
    if (!parsed_mode) {
      fmt::print(stderr, "strom sim: --mode: {}\n", parsed_mode.err().message);
      return exit_usage;
    }
    options.mode = *parsed_mode;
  }
  const auto report_out = args->get("report-out");
  const auto html_out = args->get("html-out");
  for (const auto& [path, option] : {std::pair{report_out, "--report-out"},
                                     std::pair{args->get("trace-out"), "--trace-out"},
                                     std::pair{html_out, "--html-out"}})
    if (path)
      if (auto ok = runtime::check_writable_file(*path, option); !ok) {
        fmt::print(stderr, "strom sim: {}\n", ok.err().message);
        return exit_failure;
      }
  options.trace_out = args->get("trace-out").value_or("");
  auto tls = tls_of(*args);
  if (!tls) {
    fmt::print(stderr, "strom sim: {}\n", tls.err().message);
    return exit_failure;
  }
  options.tls = std::move(*tls);
  auto loaded = runtime::sim::load_scenario_file(args->positionals()[0]);
  if (!loaded) {
    fmt::print(stderr, "strom sim: {}\n", loaded.err().message);
    return exit_failure;
  }
  // Live mode's progress: a redrawn line on a terminal, otherwise a log line now and then.
  runtime::progress_display progress{stderr};
  options.observer = &progress;
  auto ran = runtime::sim::run_scenario(*loaded, options);
  if (!ran) {
    fmt::print(stderr, "strom sim: {}\n", ran.err().message);
    return exit_failure;
  }
  if (report_out) {
    std::ofstream file{*report_out, std::ios::trunc};
    if (!(file << runtime::sim::to_json(*ran) << '\n') || !file.flush()) {
      fmt::print(stderr, "strom sim: {}: cannot write the report\n", *report_out);
      return exit_failure;
    }
  }
  if (html_out)
    if (auto written = runtime::write_html_report(*html_out, runtime::sim::sim_report_data(*ran));
        !written) {
      fmt::print(stderr, "strom sim: {}\n", written.err().message);
      return exit_failure;
    }
  const auto& m = ran->model;
  fmt::print("strom sim: {} ({} mode, {} nodes, {} workers, {}, seed {}): {}; {:.1f} samples/s, "
             "scaling efficiency {:.4f}, {:.2f} s simulated\n",
             args->positionals()[0], runtime::sim::to_string(ran->mode), ran->nodes,
             m.workers, m.topology, ran->seed, m.completed ? "completed" : "failed: " + m.failure,
             m.samples_per_second, m.scaling_efficiency, m.simulated_seconds);
  for (const auto& d : ran->strom_design)
    fmt::print("  strom's design, {}: {:.1f} samples/s, scaling efficiency {:.4f}\n", d.topology,
               d.samples_per_second, d.scaling_efficiency);
  if (!ran->passed) {
    fmt::print(stderr, "strom sim: {}: failed expectations: {}\n", args->positionals()[0],
               runtime::sim::failed_expectations(*ran));
    return exit_failure;
  }
  return exit_ok;
}

} // namespace strom::cli
