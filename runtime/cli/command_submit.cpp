#include <fmt/format.h>

#include <filesystem>

#include "options/arguments.hpp"
#include "options/checkpoint_flags.hpp"
#include "options/distribution_flags.hpp"
#include "options/training_flags.hpp"
#include "commands.hpp"
#include "scheduler_link.hpp"
#include "submit_command.hpp"
#include "options/tls_flags.hpp"
#include "training_summary.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/node/node_startup.hpp"
#include "strom/runtime/job/output_paths.hpp"
#include "strom/runtime/job/progress_display.hpp"
#include "strom/runtime/report/run_history.hpp"
#include "strom/runtime/stop_signals.hpp"

namespace strom::cli {

namespace {

const command_spec submit_spec = with_checkpoint_options(with_distribution_options({
  "strom submit JOB --to HOST:PORT [options] | strom submit --resume PATH --to HOST:PORT [options]",
  "Checks the job file JOB here, submits it to the scheduler at HOST:PORT and follows it to\n"
  "its end with the same summary as 'strom train' (or, with --detach, prints its job id).\n"
  "With --resume the job goes on from a checkpoint read here.\n"
  "Ctrl-C (or SIGTERM) while it follows the job cancels the job.\n"
  "Data paths in JOB must exist at the same absolute paths on every node.",
  with_tls_options({
    {"to", "HOST:PORT", "the scheduler ('strom node --scheduler' prints it)"},
    connect_timeout_option(),
    reconnect_timeout_option(),
    {"epochs", "N", "override training.epochs"},
    {"seed", "S", "override training.seed"},
    batch_size_option(),
    learning_rate_option(),
    {"nodes", "K", "train on K of the joined nodes (default: all)"},
    {"min-nodes", "N", "below N live nodes the job pauses for nodes to join (default 1)"},
    {"max-nodes", "N", "the job grows to nodes that join while it runs up to N (default: --nodes "
                       "when given, else no bound)"},
    {"rejoin-timeout", "DURATION", "a paused job fails unless enough nodes join within this "
                                   "(default 60s; e.g. 500ms, 90s, 2m)"},
    {"max-restarts", "N", "a job that loses a node it cannot go on without starts again from "
                          "its latest checkpoint, at most N times (default 3; 0: it fails; "
                          "needs the scheduler's --state-dir)"},
    {"metrics-out", "FILE", "write the run's metrics as one JSON object to FILE"},
    {"html-out", "FILE", html_out_help},
    {"detach", "", "print the job id and return at once; 'strom attach' follows it later"},
  }),
  0,
  1,
}), "where the job's first node saves: a folder it shares with this machine, relative to "
    "this folder");

/// Nodes one job may ask for; far more than a strom cluster is meant for, so larger is a typo.
constexpr std::uint64_t max_job_nodes = 4096;

/// Restarts of one job from its checkpoint; a job that needs more is broken, not unlucky.
constexpr std::uint64_t max_job_restarts = 100;

/// Bounds of --rejoin-timeout: a restart takes a second or more; a day is surely a typo.
constexpr auto min_rejoin_timeout = std::chrono::milliseconds(100);
constexpr auto max_rejoin_timeout = std::chrono::hours(24);

} // namespace

const command_spec& submit_command_spec() {
  return submit_spec;
}

int run_submit(int argc, char** argv) {
  runtime::stop_signals signals;  // Ctrl-C cancels the job this command follows
  auto parsed = parse_command(submit_spec, "strom submit", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  auto to = args->get_endpoint("to");
  auto epochs = args->get_uint("epochs", 1, max_epochs);
  auto seed = args->get_uint("seed", 0, UINT64_MAX);
  auto nodes = args->get_uint("nodes", 1, max_job_nodes);
  auto min_nodes = args->get_uint("min-nodes", 1, max_job_nodes);
  auto max_nodes = args->get_uint("max-nodes", 1, max_job_nodes);
  auto max_restarts = args->get_uint("max-restarts", 0, max_job_restarts);
  for (const auto* parsed : {&epochs, &seed, &nodes, &min_nodes, &max_nodes, &max_restarts}) {
    if (!parsed->ok()) {
      fmt::print(stderr, "strom submit: {}\n", parsed->err().message);
      return exit_usage;
    }
  }
  auto rejoin = args->get_duration("rejoin-timeout", min_rejoin_timeout, max_rejoin_timeout);
  if (!rejoin) {
    fmt::print(stderr, "strom submit: {}\n", rejoin.err().message);
    return exit_usage;
  }
  if (min_nodes.value() && max_nodes.value() && *min_nodes.value() > *max_nodes.value()) {
    fmt::print(stderr, "strom submit: --min-nodes {} exceeds --max-nodes {}\n",
               *min_nodes.value(), *max_nodes.value());
    return exit_usage;
  }
  if (!to) {
    fmt::print(stderr, "strom submit: {}\n", to.err().message);
    return exit_usage;
  }
  if (args->has("detach") && args->has("metrics-out")) {
    fmt::print(stderr, "strom submit: --metrics-out needs the job's end: give it to 'strom attach' "
                       "instead of --detach\n");
    return exit_usage;
  }
  if (args->has("detach") && args->has("html-out")) {
    fmt::print(stderr, "strom submit: --html-out needs the job's end: give --metrics-out to "
                       "'strom attach' instead of --detach, then run 'strom report' on it\n");
    return exit_usage;
  }

  if (auto ok = check_job_or_resume(*args); !ok) {
    fmt::print(stderr, "strom submit: {}\n", ok.err().message);
    return exit_usage;
  }
  runtime::local_training_options overrides;
  if (auto ok = read_checkpoint_dir(*args, overrides); !ok) {
    fmt::print(stderr, "strom submit: {}\n", ok.err().message);
    return exit_usage;
  }
  auto job = read_job_or_resume(*args, overrides);
  if (!job) {
    fmt::print(stderr, "strom submit: {}\n", job.err().message);
    return exit_failure;
  }
  // The checkpoint folder belongs to the job's first node, which may be another machine.
  if (auto ok = runtime::check_training_outputs({}, args->get("metrics-out")); !ok) {
    fmt::print(stderr, "strom submit: {}\n", ok.err().message);
    return exit_failure;
  }
  const auto html_out = args->get("html-out");
  if (html_out) {
    if (auto ok = runtime::check_writable_file(*html_out, "--html-out"); !ok) {
      fmt::print(stderr, "strom submit: {}\n", ok.err().message);
      return exit_failure;
    }
  }
  if (auto e = epochs.value())
    overrides.epochs = static_cast<std::uint32_t>(*e);
  overrides.seed = seed.value();
  if (auto ok = read_training_flags(*args, overrides); !ok) {
    fmt::print(stderr, "strom submit: {}\n", ok.err().message);
    return exit_usage;
  }
  if (auto ok = read_distribution_flags(*args, overrides); !ok) {
    fmt::print(stderr, "strom submit: {}\n", ok.err().message);
    return exit_usage;
  }
  // The first node saves there: an absolute path means the same folder to every process.
  if (!overrides.checkpoint_dir.empty())
    overrides.checkpoint_dir = std::filesystem::absolute(overrides.checkpoint_dir).string();
  if (auto ok = read_keep_checkpoints(*args, overrides); !ok) {
    fmt::print(stderr, "strom submit: {}\n", ok.err().message);
    return exit_usage;
  }
  const auto node_count = static_cast<std::uint32_t>(nodes.value().value_or(0));
  auto submission = runtime::make_submission(*job, overrides, node_count);
  if (!submission) {
    fmt::print(stderr, "strom submit: {}\n", submission.err().message);
    return exit_failure;
  }
  submission->min_nodes = static_cast<std::uint32_t>(min_nodes.value().value_or(0));
  submission->max_nodes = static_cast<std::uint32_t>(max_nodes.value().value_or(0));
  if (auto restarts = max_restarts.value())
    submission->max_restarts = static_cast<std::uint32_t>(*restarts);
  if (*rejoin)
    submission->rejoin_timeout_ms = static_cast<std::uint64_t>(rejoin->value().count());

  const auto where = runtime::to_string(*to);
  auto link = connect_scheduler(*args, *to, "strom submit", job->source(), true);
  if (!link)
    return failure_status();
  if (runtime::stop_requested()) {
    fmt::print(stderr, "strom submit: interrupted before {} was submitted\n", job->source());
    return failure_status();
  }
  if (args->has("detach")) {
    auto job_id = runtime::submit_job(link->system, link->scheduler, *submission);
    if (!job_id) {
      fmt::print(stderr, "strom submit: {} to {}: {}\n", job->source(), where,
                 job_id.err().message);
      return exit_failure;
    }
    fmt::print("job {} submitted to {}\nfollow it with: strom attach {} --to {}\n", *job_id, where,
               *job_id, where);
    return exit_ok;
  }
  auto reconnect = reconnector_for(*args, *link, *to);
  if (!reconnect) {
    fmt::print(stderr, "strom submit: {}\n", reconnect.err().message);
    return exit_usage;
  }
  runtime::progress_display display{stderr};
  // A client sees the job's epochs, and its nodes' figures and membership changes as the
  // scheduler passes them on with each progress report.
  runtime::run_recorder recorder{&display, runtime::cluster_source::scheduler_reports};
  recorder.set_settings(run_settings("strom submit", argc, argv, *job, overrides));
  auto report = runtime::run_job(link->system, link->scheduler, *submission, &recorder, {},
                                 *reconnect);
  if (!report && !runtime::stop_requested())
    report = error{fmt::format("{} on {}: {}", job->source(), where, report.err().message)};
  const auto history = recorder.history();
  return finish_training("strom submit", report,
                         {args->get("metrics-out"), html_out, &history});
}

} // namespace strom::cli
