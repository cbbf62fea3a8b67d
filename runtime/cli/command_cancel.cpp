#include <fmt/format.h>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "scheduler_link.hpp"
#include "options/tls_flags.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/stop_signals.hpp"

namespace strom::cli {

namespace {

const command_spec cancel_spec{
  "strom cancel JOB_ID --to HOST:PORT",
  "Cancels job JOB_ID on the scheduler at HOST:PORT: its nodes stop training it and it ends\n"
  "as 'cancelled' (in 'strom status', and for clients following it).",
  with_tls_options({
    {"to", "HOST:PORT", "the scheduler the job was submitted to"},
    connect_timeout_option(),
  }),

  1,
};

} // namespace

int run_cancel(int argc, char** argv) {
  runtime::stop_signals signals;
  auto parsed = parse_command(cancel_spec, "strom cancel", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  auto job_id = parse_job_id(args->positionals()[0]);
  if (!job_id) {
    fmt::print(stderr, "strom cancel: {}\n", job_id.err().message);
    return exit_usage;
  }
  auto to = args->get_endpoint("to");
  if (!to) {
    fmt::print(stderr, "strom cancel: {}\n", to.err().message);
    return exit_usage;
  }
  const auto where = runtime::to_string(*to);
  auto link = connect_scheduler(*args, *to, "strom cancel", fmt::format("job {}", *job_id));
  if (!link)
    return failure_status();
  if (auto cancelled = runtime::cancel_job(link->system, link->scheduler, *job_id); !cancelled) {
    fmt::print(stderr, "strom cancel: job {} on {}: {}\n", *job_id, where,
               cancelled.err().message);
    return failure_status();
  }
  fmt::print("cancelled job {}\n", *job_id);
  return exit_ok;
}

} // namespace strom::cli
