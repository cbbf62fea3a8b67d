#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "options/arguments.hpp"
#include "options/checkpoint_flags.hpp"
#include "options/distribution_flags.hpp"
#include "options/training_flags.hpp"
#include "options/observation_flags.hpp"
#include "commands.hpp"
#include "training_summary.hpp"
#include "strom/compute/device/device_kind.hpp"
#include "strom/log.hpp"
#include "strom/runtime/node/capacity_text.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/output_paths.hpp"
#include "strom/runtime/job/progress_display.hpp"
#include "strom/runtime/report/run_history.hpp"
#include "strom/runtime/stop_signals.hpp"
#include "strom/runtime/node/training_setup.hpp"

namespace strom::cli {

namespace {

const command_spec train_spec = with_timeline_option(with_stall_option(with_observation_options(
  with_checkpoint_options(with_distribution_options({
  "strom train JOB [options] | strom train --resume PATH [options]",
  "Trains the job file JOB, evaluates it on the test set after every epoch and saves a\n"
  "checkpoint of parameters, updater state and progress. Ctrl-C (or SIGTERM) stops it and\n"
  "says where its last checkpoint is; --resume goes on from there (flags override the run's).",
  {
    {"epochs", "N", "override training.epochs"},
    {"workers", "N", "trainers per node sharing encoded updates (default: one per core, or 1 with --nodes)"},
    {"nodes", "K", "an in-process cluster of K nodes, each its own actor system, over loopback (default 1)"},
    {"servers", "S", "S server nodes besides, holding the parameters of a kvstore job (--mode kvstore)"},
    {"seed", "S", "override training.seed"},
    batch_size_option(),
    learning_rate_option(),
    {"metrics-out", "FILE", "write the run's metrics as one JSON object to FILE"},
    {"html-out", "FILE", html_out_help},
    {"metrics-linger", "DURATION",
     "keep serving --metrics-listen this long after the run ended, for a last scrape (Ctrl-C "
     "ends it sooner)"},
    {"memory-limit", "BYTES", "the most memory strom may place on each node (e.g. 7MiB, 2G)"},
    {"node-speeds", "F1,F2,...",
     "testing aid: node i computes Fi times as fast (0 < Fi <= 1) by waiting (1/Fi - 1) "
     "times each computation's duration after it; one factor per node", true},
    {"speed-drift", "NODE=F@EPOCH,...",
     "testing aid: node NODE (from 1) computes at speed factor F from epoch EPOCH on (pipeline "
     "jobs re-partition after it)", true},
  },
  0,
  1,
}), "where to save"))));

/// Nodes of an in-process cluster; each starts an actor system with its own threads.
constexpr std::uint64_t max_nodes = 64;

/// Most of --metrics-linger: Prometheus scrapes every minute or so; a day is surely a typo.
constexpr auto max_metrics_linger = std::chrono::hours(24);

/// Passes progress on and counts the epochs that ended, keeping the last one's checkpoint:
/// every run saves its checkpoint before it reports the epoch.
class epoch_counter : public runtime::training_observer {
public:
  explicit epoch_counter(runtime::training_observer& next) : next_(next) {}
  void on_step(const runtime::step_progress& p) override { next_.on_step(p); }
  void on_epoch(const runtime::epoch_summary& s) override {
    ++epochs_;
    checkpoint_ = s.checkpoint;
    next_.on_epoch(s);
  }
  std::uint32_t epochs() const noexcept { return epochs_; }
  const std::string& checkpoint() const noexcept { return checkpoint_; }

private:
  runtime::training_observer& next_;
  std::uint32_t epochs_ = 0;
  std::string checkpoint_;  ///< the last epoch's; empty: none saved
};

/// What `strom train` says when SIGINT or SIGTERM stopped it: where its last checkpoint is.
int report_interrupted(const std::string& checkpoint, std::uint32_t epochs_done) {
  if (epochs_done == 0 || checkpoint.empty())
    fmt::print(stderr, "strom train: interrupted in epoch {}; no checkpoint was written yet\n",
               epochs_done + 1);
  else
    fmt::print(stderr, "strom train: interrupted in epoch {}; last checkpoint (epoch {}): {}\n",
               epochs_done + 1, epochs_done, checkpoint);
  return failure_status();
}

/// --memory-limit and --node-speeds into `shape` (whose nodes are set).
result<void> read_node_capacity(const arguments& args, runtime::cluster_shape& shape) {
  if (auto text = args.get("memory-limit")) {
    auto limit = runtime::parse_byte_count(*text, "--memory-limit");
    if (!limit)
      return limit.err();
    shape.memory_limit = *limit;
  }
  if (auto text = args.get("node-speeds")) {
    auto speeds = runtime::parse_node_speeds(*text, shape.nodes, "--node-speeds");
    if (!speeds)
      return speeds.err();
    shape.node_speeds.resize(shape.nodes);
    for (std::size_t i = 0; i < speeds->size(); ++i)
      shape.node_speeds[i].factor = (*speeds)[i];
  }
  if (auto text = args.get("speed-drift")) {
    auto drifts = runtime::parse_node_drifts(*text, shape.nodes, "--speed-drift");
    if (!drifts)
      return drifts.err();
    shape.node_speeds.resize(shape.nodes);
    for (const auto& [node, drift] : *drifts)
      shape.node_speeds[node].drift = drift;
  }
  return success();
}

} // namespace

int run_train(int argc, char** argv) {
  runtime::stop_signals signals;  // Ctrl-C ends the run, naming its last checkpoint
  auto parsed = parse_command(train_spec, "strom train", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  auto epochs = args->get_uint("epochs", 1, max_epochs);
  auto workers = args->get_uint("workers", 1, max_workers);
  auto nodes = args->get_uint("nodes", 1, max_nodes);
  auto servers = args->get_uint("servers", 1, max_nodes);
  auto seed = args->get_uint("seed", 0, UINT64_MAX);
  for (const auto* parsed : {&epochs, &workers, &nodes, &servers, &seed}) {
    if (!parsed->ok()) {
      fmt::print(stderr, "strom train: {}\n", parsed->err().message);
      return exit_usage;
    }
  }

  if (auto ok = check_job_or_resume(*args); !ok) {
    fmt::print(stderr, "strom train: {}\n", ok.err().message);
    return exit_usage;
  }
  runtime::local_training_options options;
  if (auto ok = read_checkpoint_dir(*args, options); !ok) {
    fmt::print(stderr, "strom train: {}\n", ok.err().message);
    return exit_usage;
  }
  // A resumed run keeps the shape it had unless told otherwise, so its checkpoint is read
  // first; a job file is read once the flags passed their own checks.
  std::optional<result<runtime::job_spec>> job;
  if (args->has("resume"))
    job = read_job_or_resume(*args, options);
  const auto* resumed = options.resume ? &options.resume->progress : nullptr;
  const bool resumed_shape = resumed && resumed->nodes > 0;
  runtime::cluster_shape shape;
  shape.nodes = static_cast<std::uint32_t>(
    nodes.value().value_or(resumed_shape ? resumed->nodes : 1));
  if (auto ok = read_node_capacity(*args, shape); !ok && (!job || *job)) {
    fmt::print(stderr, "strom train: {}\n", ok.err().message);
    return exit_usage;
  }
  if (!job)
    job = read_job_or_resume(*args, options);
  if (!*job) {
    fmt::print(stderr, "strom train: {}\n", job->err().message);
    return exit_failure;
  }
  auto& spec = **job;

  runtime::progress_display display{stderr};
  epoch_counter epochs_done{display};
  if (auto e = epochs.value())
    options.epochs = static_cast<std::uint32_t>(*e);
  options.seed = seed.value();
  if (auto ok = read_training_flags(*args, options); !ok) {
    fmt::print(stderr, "strom train: {}\n", ok.err().message);
    return exit_usage;
  }
  if (auto ok = read_distribution_flags(*args, options); !ok) {
    fmt::print(stderr, "strom train: {}\n", ok.err().message);
    return exit_usage;
  }
  if (auto ok = read_keep_checkpoints(*args, options); !ok) {
    fmt::print(stderr, "strom train: {}\n", ok.err().message);
    return exit_usage;
  }
  if (auto ok = runtime::check_training_outputs(options.checkpoint_dir, args->get("metrics-out"));
      !ok) {
    fmt::print(stderr, "strom train: {}\n", ok.err().message);
    return exit_failure;
  }
  const auto html_out = args->get("html-out");
  if (html_out) {
    if (auto ok = runtime::check_writable_file(*html_out, "--html-out"); !ok) {
      fmt::print(stderr, "strom train: {}\n", ok.err().message);
      return exit_failure;
    }
  }
  // Records the epochs and, through the metrics hook, each node's figures over time.
  auto recorder = std::make_shared<runtime::run_recorder>(&epochs_done);
  recorder->set_settings(run_settings("strom train", argc, argv, spec, options));
  options.observer = recorder.get();
  auto observe = read_observation_flags(*args);
  if (!observe) {
    fmt::print(stderr, "strom train: {}\n", observe.err().message);
    return exit_usage;
  }
  observe->recorder = recorder;
  auto linger = args->get_duration("metrics-linger", std::chrono::milliseconds(0),
                                   max_metrics_linger);
  if (!linger || (linger.value() && !observe->metrics_listen)) {
    fmt::print(stderr, "strom train: {}\n",
               linger ? "--metrics-linger needs --metrics-listen" : linger.err().message);
    return exit_usage;
  }
  auto watching = runtime::observation::start(*observe);
  if (!watching) {
    fmt::print(stderr, "strom train: {}\n", watching.err().message);
    return exit_failure;
  }
  options.watch = (*watching)->hooks();
  if (auto ok = read_stall_warning(*args, options.timeouts); !ok) {
    fmt::print(stderr, "strom train: {}\n", ok.err().message);
    return exit_usage;
  }
  // One GPU: one worker unless asked for more (they share it, each on its own stream).
  const bool on_gpu = options.device.value_or(spec.reader().getTraining().getDevice())
                      == schema::Device::CUDA;
  if (on_gpu) {
    if (const auto cuda = compute::find_cuda(); !cuda.usable) {
      fmt::print(stderr, "strom train: --device cuda: {}\n", cuda.why);
      return exit_failure;
    }
  }
  const std::uint32_t default_workers =
    resumed_shape && shape.nodes == resumed->nodes ? std::max(1u, resumed->workers / shape.nodes)
    : shape.nodes > 1 || on_gpu                    ? 1
                                                   : std::max(1u, std::thread::hardware_concurrency());
  shape.workers = static_cast<std::uint32_t>(workers.value().value_or(default_workers));
  shape.servers = static_cast<std::uint32_t>(
    servers.value().value_or(resumed && resumed->servers > 0 ? resumed->servers : 0));
  auto report = runtime::train_on_cluster(spec, options, shape);
  if (auto written = (*watching)->finish(); !written) {
    fmt::print(stderr, "strom train: {}\n", written.err().message);
    return exit_failure;
  }
  display.end_line();
  if (!report && runtime::stop_requested())
    return report_interrupted(epochs_done.checkpoint(), epochs_done.epochs());
  // The page needs no trace: the recorder saw each node's figures (`strom report` with
  // --timeline draws the same page).
  const auto history = recorder->history();
  const int status =
    finish_training("strom train", report, {args->get("metrics-out"), html_out, &history});
  if (auto keep = linger.value(); keep && keep->count() > 0) {
    log::info("serving metrics at http://{}:{}/metrics for {} ms more (--metrics-linger)",
              observe->metrics_listen->host, (*watching)->metrics_port(), keep->count());
    const auto until = std::chrono::steady_clock::now() + *keep;
    while (std::chrono::steady_clock::now() < until && !runtime::stop_requested())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return status;
}

} // namespace strom::cli
