#include "strom/runtime/parallel_training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include <caf/all.hpp>

#include "strom/actors/local_node.hpp"
#include "strom/actors/messages.hpp"
#include "strom/compute/codecs/threshold_encoder_from_spec.hpp"
#include "strom/compute/data/partition.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/log.hpp"
#include "strom/runtime/training_setup.hpp"

namespace strom::runtime {

namespace {

/// A node whose trainers send nothing for this long is stuck (a step of the largest example
/// job takes well under a second); fail instead of hanging.
constexpr auto silence_limit = std::chrono::minutes(5);

/// This node's id in frames; a single in-process node.
constexpr std::uint64_t local_node_id = 0;

/// Progress of one epoch, summed over the workers.
struct epoch_tally {
  double loss_sum = 0.0;
  std::uint64_t batches = 0;
  std::uint64_t samples = 0;
  std::uint32_t reported = 0;  // epoch_reports received
  std::uint32_t drained = 0;   // drain_reports received
};

} // namespace

result<training_report> train_in_process(job_spec& job, const local_training_options& options,
                                         std::uint32_t workers) {
  const auto run_start = training_clock::now();
  if (workers == 0)
    return error{fmt::format("{}: workers: must be at least 1", job.source())};
  if (auto ok = prepare_run(job, options); !ok)
    return ok.err();
  auto spec = job.reader();
  const auto epochs = spec.getTraining().getEpochs();
  const auto batch_size = spec.getTraining().getBatchSize();
  auto encoding = compute::make_threshold_encoder_options(spec.getDistributed().getSharing());
  if (!encoding)
    return error{fmt::format("{}: {}", job.source(), encoding.err().message)};

  std::vector<std::shared_ptr<compute::replica>> replicas;
  for (std::uint32_t w = 0; w < workers; ++w) {
    auto built = compute::make_replica(spec, w);
    if (!built)
      return error{fmt::format("{}: {}", job.source(), built.err().message)};
    replicas.push_back(std::move(*built));
  }
  auto& net = replicas.front()->net();

  auto loaded = load_training_data(job, net);
  if (!loaded)
    return loaded.err();
  auto train_set = std::make_shared<const compute::dataset>(std::move(loaded->train));
  const auto& test_set = loaded->test;
  if (train_set->size() < workers)
    return error{fmt::format("{}: data.train: {} samples cannot feed {} workers", job.source(),
                             train_set->size(), workers)};
  log::info("{}: {} workers, {} training and {} test samples, {} parameters", job.source(),
            workers, train_set->size(), test_set.size(), net.parameters().size());

  training_report report;
  report.job = spec.getName().cStr();
  report.epochs = epochs;
  report.workers = workers;
  const std::string checkpoint = checkpoint_path(options, report.job);
  training_observer silent;
  training_observer& observer = options.observer ? *options.observer : silent;
  std::size_t batches_per_epoch = 0;
  for (std::uint32_t w = 0; w < workers; ++w)
    batches_per_epoch += (compute::partition(train_set->size(), w, workers).size() + batch_size - 1)
                         / batch_size;

  caf::actor_system_config config;
  actors::register_message_types(config);
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  actors::local_node_setup setup;
  setup.node_id = local_node_id;
  setup.replicas = replicas;
  setup.train = train_set;
  setup.seed = spec.getTraining().getSeed();
  setup.shuffle = spec.getData().getShuffle();
  setup.batch_size = batch_size;
  setup.encoding = std::move(*encoding);
  setup.supervisor = caf::actor_cast<caf::actor>(self);
  const auto node = actors::spawn_local_node(system, setup);
  for (const auto& member : node.all())
    self->monitor(member);

  std::optional<error> failure;
  actors::drain_report last_drains_total{};
  for (std::uint32_t epoch = 0; epoch < epochs && !failure; ++epoch) {
    const auto epoch_start = training_clock::now();
    for (const auto& t : node.trainers)
      self->send(t, actors::start_atom_v, epoch);
    epoch_tally tally;
    std::uint64_t steps = 0;
    double step_loss_sum = 0.0;
    std::uint64_t step_samples = 0;
    actors::drain_report drains{};
    self->receive_while([&] { return !failure && tally.drained < workers; })(
      [&](const actors::step_report& step) {
        ++steps;
        step_loss_sum += step.loss;
        step_samples += step.samples;
        const double rate = step_samples / std::max(seconds_since(epoch_start), 1e-9);
        const double remaining =
          static_cast<double>(train_set->size()) * (epochs - epoch) - static_cast<double>(step_samples);
        observer.on_step({epoch + 1, epochs, steps, batches_per_epoch, step_loss_sum / steps, rate,
                          remaining / std::max(rate, 1e-9)});
      },
      [&](const actors::epoch_report& done) {
        tally.loss_sum += done.loss_sum;
        tally.batches += done.batches;
        tally.samples += done.samples;
        ++tally.reported;
        if (done.worker == 0)
          report.iterations = done.iteration;
      },
      [&](const actors::drain_report& drained) {
        drains.updates_applied += drained.updates_applied;
        drains.duplicate_updates_applied += drained.duplicate_updates_applied;
        drains.frames_rejected += drained.frames_rejected;
        ++tally.drained;
      },
      [&](const caf::down_msg& down) {
        failure = error{fmt::format("{}: an actor of the node stopped: {}", job.source(),
                                    system.render(down.reason))};
      },
      caf::after(silence_limit) >> [&] {
        failure = error{fmt::format("{}: no progress for {} s in epoch {}", job.source(),
                                    std::chrono::seconds(silence_limit).count(), epoch + 1)};
      });
    if (failure)
      break;
    last_drains_total = drains;
    // Between epochs every trainer is idle and has applied every frame (drained), so worker
    // 0's replica can be read here without racing its actor.
    const epoch_totals totals{tally.loss_sum, tally.batches, tally.samples,
                              seconds_since(epoch_start)};
    if (auto ok = end_epoch(report, epoch, totals, *replicas.front(), test_set, observer, job,
                            checkpoint);
        !ok)
      failure = ok.err();
  }

  if (!failure) {
    constexpr auto stats_timeout = std::chrono::seconds(10);
    self->request(node.accumulator, stats_timeout, actors::stats_atom_v)
      .receive(
        [&](const actors::accumulator_stats& stats) {
          report.bytes_sent = stats.bytes_sent;
          report.dense_bytes_equivalent = stats.dense_bytes_equivalent;
          report.mean_density = stats.rounds ? stats.density_sum / stats.rounds : 0.0;
          report.final_threshold = stats.threshold;
        },
        [&](caf::error& err) { failure = error{"accumulator stats: " + system.render(err)}; });
    self->request(node.relay, stats_timeout, actors::stats_atom_v)
      .receive(
        [&](const actors::relay_stats& stats) {
          report.duplicate_updates_dropped = stats.duplicates_dropped;
          report.frames_rejected += stats.frames_rejected;
        },
        [&](caf::error& err) { failure = error{"relay stats: " + system.render(err)}; });
    report.updates_applied = last_drains_total.updates_applied;
    report.duplicate_updates_applied = last_drains_total.duplicate_updates_applied;
    report.frames_rejected += last_drains_total.frames_rejected;
  }
  for (const auto& member : node.all()) {
    self->demonitor(member);
    self->send_exit(member, caf::exit_reason::user_shutdown);
  }
  if (failure)
    return *failure;
  end_run(report, run_start, checkpoint);
  return report;
}

} // namespace strom::runtime
