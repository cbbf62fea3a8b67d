#include <fmt/format.h>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "scheduler_link.hpp"
#include "options/tls_flags.hpp"
#include "training_summary.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/job/output_paths.hpp"
#include "strom/runtime/job/progress_display.hpp"
#include "strom/runtime/stop_signals.hpp"

namespace strom::cli {

namespace {

const command_spec attach_spec{
  "strom attach JOB_ID --to HOST:PORT [options]",
  "Follows job JOB_ID (from 'strom submit --detach') on the scheduler at HOST:PORT to its end\n"
  "and prints the same summary as 'strom train'; a job that has ended reports at once.\n"
  "Ctrl-C (or SIGTERM) detaches and leaves the job running.",
  with_tls_options({
    {"to", "HOST:PORT", "the scheduler the job was submitted to"},
    connect_timeout_option(),
    reconnect_timeout_option(),
    {"metrics-out", "FILE", "write the run's metrics as one JSON object to FILE"},
  }),

  1,
};

} // namespace

int run_attach(int argc, char** argv) {
  runtime::stop_signals signals;  // Ctrl-C detaches: the job keeps running
  auto parsed = parse_command(attach_spec, "strom attach", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  auto parsed_id = parse_job_id(args->positionals()[0]);
  if (!parsed_id) {
    fmt::print(stderr, "strom attach: {}\n", parsed_id.err().message);
    return exit_usage;
  }
  const auto job_id = *parsed_id;
  auto to = args->get_endpoint("to");
  if (!to) {
    fmt::print(stderr, "strom attach: {}\n", to.err().message);
    return exit_usage;
  }
  if (auto ok = runtime::check_training_outputs({}, args->get("metrics-out")); !ok) {
    fmt::print(stderr, "strom attach: {}\n", ok.err().message);
    return exit_failure;
  }
  const auto where = runtime::to_string(*to);
  auto link = connect_scheduler(*args, *to, "strom attach", fmt::format("job {}", job_id), true);
  if (!link)
    return failure_status();
  auto reconnect = reconnector_for(*args, *link, *to);
  if (!reconnect) {
    fmt::print(stderr, "strom attach: {}\n", reconnect.err().message);
    return exit_usage;
  }
  runtime::progress_display display{stderr};
  auto report = runtime::attach_job(link->system, link->scheduler, job_id, &display, {},
                                    *reconnect);
  if (!report && runtime::stop_requested())
    report = error{fmt::format("{} (stop it with: strom cancel {} --to {})", report.err().message,
                               job_id, where)};
  else if (!report)
    report = error{fmt::format("job {} on {}: {}", job_id, where, report.err().message)};
  return finish_training("strom attach", report, {args->get("metrics-out"), std::nullopt, nullptr});
}

} // namespace strom::cli
