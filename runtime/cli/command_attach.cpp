#include <fmt/format.h>

#include <charconv>

#include "arguments.hpp"
#include "commands.hpp"
#include "scheduler_link.hpp"
#include "training_summary.hpp"
#include "strom/runtime/job_client.hpp"
#include "strom/runtime/output_paths.hpp"
#include "strom/runtime/progress_display.hpp"

namespace strom::cli {

namespace {

const command_spec attach_spec{
  "strom attach JOB_ID --to HOST:PORT [options]",
  "Follows job JOB_ID (from 'strom submit --detach') on the scheduler at HOST:PORT to its end\n"
  "and prints the same summary as 'strom train'; a job that has ended reports at once.",
  {
    {"to", "HOST:PORT", "the scheduler the job was submitted to"},
    {"metrics-out", "FILE", "write the run's metrics as one JSON object to FILE"},
  },
  1,
};

} // namespace

int run_attach(int argc, char** argv) {
  auto parsed = parse_command(attach_spec, "strom attach", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  const auto& id_text = args->positionals()[0];
  std::uint64_t job_id = 0;
  auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), job_id);
  if (ec != std::errc{} || end != id_text.data() + id_text.size()) {
    fmt::print(stderr, "strom attach: job id '{}' is not a non-negative integer\n", id_text);
    return exit_usage;
  }
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
  auto link = connect_scheduler(*to, "strom attach", fmt::format("job {}", job_id));
  if (!link)
    return exit_failure;
  runtime::progress_display display{stderr};
  auto report = runtime::attach_job(link->system, link->scheduler, job_id, &display);
  if (!report)
    report = error{fmt::format("job {} on {}: {}", job_id, where, report.err().message)};
  return finish_training("strom attach", report, args->get("metrics-out"));
}

} // namespace strom::cli
