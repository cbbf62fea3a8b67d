#include "strom/runtime/node/node_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <new>

#include "strom/compute/encoders/threshold_encoder_from_spec.hpp"
#include "strom/compute/data/partition.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/log.hpp"
#include "strom/runtime/node/kvstore_setup.hpp"
#include "strom/runtime/node/machine_memory.hpp"
#include "strom/runtime/node/training_setup.hpp"

namespace strom::runtime {

result<actors::node_job> prepare_node_job(const actors::job_assignment& assignment,
                                          std::optional<schema::Device> device,
                                          const actors::replicas_built& built) {
  if (assignment.workers == 0 || assignment.first_worker + assignment.workers > assignment.total_workers)
    return error{fmt::format("{}: workers {}..{} do not fit {} workers in all",
                             assignment.source, assignment.first_worker,
                             assignment.first_worker + assignment.workers,
                             assignment.total_workers)};
  // Nodes read the data themselves: paths in the job text are absolute.
  auto parsed = parse_job_text(assignment.job_text, assignment.source, "/");
  if (!parsed)
    return parsed.err();
  auto job = std::make_shared<job_spec>(std::move(*parsed));
  local_training_options overrides;
  overrides.device = device;
  if (auto ok = prepare_run(*job, overrides); !ok)
    return ok.err();
  if (auto ok = check_job_memory(*job, assignment.workers, assignment.total_workers > 1); !ok)
    return ok.err();
  auto spec = job->reader();
  const auto batch_size = spec.getTraining().getBatchSize();
  auto encoding = compute::make_threshold_encoder_options(spec.getDistributed().getSharing());
  if (!encoding)
    return error{fmt::format("{}: {}", job->source(), encoding.err().message)};
  const auto staleness = spec.getDistributed().getStaleness();
  // Reading the data takes longer than building the replicas: both at once.
  auto loading = std::async(std::launch::async, [job] { return load_job_data(*job); });

  actors::node_job prepared;
  auto& node = prepared.node;
  try {
    for (std::uint32_t w = 0; w < assignment.workers; ++w) {
      auto built = compute::make_replica(spec, assignment.first_worker + w);
      if (!built)
        return error{fmt::format("{}: {}", job->source(), built.err().message)};
      node.replicas.push_back(std::move(*built));
    }
  } catch (const std::bad_alloc&) {
    // The estimate passed but memory ran out anyway (other programs took it meanwhile).
    return error{fmt::format("{}: out of memory while building worker {} of {} on this node",
                             job->source(), node.replicas.size() + 1, assignment.workers)};
  }
  prepared.device = node.replicas.front()->device_name();
  if (built)
    built(*node.replicas.front());
  const auto& net = node.replicas.front()->net();
  auto data = loading.get();
  if (!data)
    return data.err();
  if (auto fits = check_training_data(*job, *data, net.input_shape().size(), net.classes());
      !fits)
    return fits.err();
  if (data->train.size() < assignment.total_workers)
    return error{fmt::format("{}: data.train: {} samples cannot feed {} workers", job->source(),
                             data->train.size(), assignment.total_workers)};
  node.train = std::make_shared<const compute::dataset>(std::move(data->train));
  node.origins = assignment.origins;
  node.first_worker = assignment.first_worker;
  node.total_workers = assignment.total_workers;
  node.staleness = staleness;
  node.seed = spec.getTraining().getSeed();
  node.shuffle = spec.getData().getShuffle();
  node.batch_size = batch_size;
  node.encoding = std::move(*encoding);
  node.update_power = compute::update_power(spec.getDistributed().getSharing(),
                                            spec.getTraining().getUpdater());
  const auto own_update =
    compute::own_update_handling_of(spec.getDistributed().getSharing(), node.update_power);
  node.momentum_masking = own_update.momentum_masking;
  node.apply_own_update = own_update.at_once;
  if (spec.getDistributed().getMode() == schema::TrainingMode::AVERAGING)
    node.averaging = {spec.getDistributed().getAveragingFrequency(),
                      spec.getDistributed().getAverageUpdaters()};
  prepared.mode = to_string(spec.getDistributed().getMode());
  if (spec.getDistributed().getMode() == schema::TrainingMode::KVSTORE) {
    if (assignment.shards.empty())
      return error{fmt::format("{}: a kvstore job needs at least one server; none holds its "
                               "parameters",
                               job->source())};
    node.kv = kv_options_of(spec.getDistributed(), assignment.shards, node.encoding, batch_size);
    prepared.kvstore = to_string(spec.getDistributed().getKvstore());
  }
  for (std::uint32_t w = 0; w < assignment.workers; ++w) {
    const auto share =
      compute::partition(node.train->size(), assignment.first_worker + w, assignment.total_workers)
        .size();
    prepared.samples_per_epoch += share;
    prepared.batches_per_epoch += (share + batch_size - 1) / batch_size;
  }
  prepared.job_name = spec.getName().cStr();
  prepared.epochs = spec.getTraining().getEpochs();
  log::debug("{}: node rank {} trains workers {}..{} of {} on {} samples", job->source(),
            assignment.rank, assignment.first_worker,
            assignment.first_worker + assignment.workers - 1, assignment.total_workers,
            prepared.samples_per_epoch);
  // Any node may be asked to evaluate: the first one alive is, each epoch.
  auto test = std::make_shared<const compute::dataset>(std::move(data->test));
  std::uint32_t servers = 0;
  for (const auto& shard : assignment.shards)
    servers = std::max(servers, shard.server + 1);
  const checkpoint_plan checkpoints{
    assignment.checkpoint_dir, assignment.keep_checkpoints, assignment.total_workers,
    static_cast<std::uint32_t>(assignment.origins.size()), servers};
  const auto train_samples = node.train->size();
  prepared.end_epoch = [job, test, checkpoints, train_samples](compute::replica& trained,
                                                               std::uint32_t epoch) {
    return check_epoch(trained, *test, *job, checkpoints, epoch, train_samples * (epoch + 1));
  };
  return prepared;
}

} // namespace strom::runtime
