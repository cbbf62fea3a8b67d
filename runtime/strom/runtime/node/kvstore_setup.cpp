#include "strom/runtime/node/kvstore_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "strom/compute/kvstore/key_layout.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/node/training_setup.hpp"

namespace strom::runtime {

result<std::vector<actors::parameter_shard_setup>> prepare_shards(
  const actors::shard_assignment& work) {
  auto parsed = parse_job_text(work.job_text, work.source, "/");
  if (!parsed)
    return parsed.err();
  auto& job = *parsed;
  if (auto ok = prepare_run(job, {}); !ok)
    return ok.err();
  const auto spec = job.reader();
  const auto distributed = spec.getDistributed();
  if (work.servers == 0 || work.server >= work.servers)
    return error{fmt::format("{}: server {} of {} servers", job.source(), work.server,
                             work.servers)};
  if (work.replicas == 0 || work.replicas > work.servers)
    return error{fmt::format("{}: {} replicas of each key range need as many servers; the job "
                             "has {}",
                             job.source(), work.replicas, work.servers)};
  // Worker 0's replica: every worker starts from the same parameters (model_from_spec).
  auto net = compute::make_model(spec.getNetwork(), 1);
  if (!net)
    return error{fmt::format("{}: {}", job.source(), net.err().message)};
  (*net)->initialize(spec.getTraining().getSeed());
  auto rule = compute::make_updater(spec.getTraining().getUpdater());
  auto schedule = compute::make_schedule(spec.getTraining().getUpdater());
  if (!rule || !schedule)
    return error{fmt::format("{}: {}", job.source(),
                             rule ? schedule.err().message : rule.err().message)};
  auto placed = compute::place_keys(compute::parameter_keys(**net), work.servers,
                                    distributed.getBigArrayBound());
  if (!placed)
    return error{fmt::format("{}: {}", job.source(), placed.err().message)};
  std::shared_ptr<const compute::updater> shared_rule{std::move(*rule)};
  auto parameters = (*net)->parameters();
  // A job that goes on from a checkpoint starts from its parameters and updater state.
  std::optional<compute::replica_snapshot> resumed;
  if (work.resume.epochs_done > 0) {
    auto decoded = compute::decode_snapshot(work.resume.snapshot.words());
    if (!decoded)
      return error{fmt::format("{}: the checkpoint to resume from: {}", job.source(),
                               decoded.err().message)};
    const auto blocks = shared_rule->state_size(parameters.size());
    if (decoded->parameters.size() != parameters.size()
        || decoded->updater_state.size() != blocks)
      return error{fmt::format("{}: the checkpoint to resume from holds {} parameters and {} "
                               "floats of updater state; the job's network has {} and {}",
                               job.source(), decoded->parameters.size(),
                               decoded->updater_state.size(), parameters.size(), blocks)};
    resumed = std::move(*decoded);
    parameters = resumed->parameters;
  }
  std::vector<actors::parameter_shard_setup> shards;
  for (const auto& range : *placed) {
    // Replicas follow a range's first server: chain position p lives on server first + p. A
    // server that joins a running job holds the ranges named, at the positions named.
    auto position = (work.server + work.servers - range.server) % work.servers;
    if (!work.ranges.empty()) {
      const auto named = std::find_if(work.ranges.begin(), work.ranges.end(), [&](const auto& e) {
        return e.key == range.key && e.part == range.part;
      });
      if (named == work.ranges.end())
        continue;
      position = named->position;
    } else if (position >= work.replicas) {
      continue;
    }
    actors::parameter_shard_setup one;
    one.range = range;
    one.position = position;
    const auto values = parameters.subspan(range.offset, range.count);
    one.initial.assign(values.begin(), values.end());
    if (resumed) {
      one.iteration = resumed->progress.iteration;
      // The updater's blocks (Adam's m, then v), each laid out like the parameters.
      const auto& state = resumed->updater_state;
      const auto total = parameters.size();
      for (std::size_t b = 0; total > 0 && b < state.size() / total; ++b) {
        const auto block = state.begin() + static_cast<std::ptrdiff_t>(b * total + range.offset);
        one.initial_state.insert(one.initial_state.end(), block,
                                 block + static_cast<std::ptrdiff_t>(range.count));
      }
    }
    one.rule = shared_rule;
    one.schedule = *schedule;
    one.sync = distributed.getKvstore() == schema::KvStoreSync::DIST_ASYNC
                 ? actors::kv_sync::dist_async
                 : actors::kv_sync::dist_sync;
    one.server_optimizer = distributed.getServerOptimizer();
    one.fp16_answers = distributed.getPullPrecision() == schema::PullPrecision::FP16;
    shards.push_back(std::move(one));
  }
  return shards;
}

actors::kv_options kv_options_of(schema::Distributed::Reader distributed,
                                 const std::vector<actors::kv_shard_entry>& entries,
                                 const compute::threshold_encoder_options& threshold,
                                 std::size_t batch_size) {
  actors::kv_options options;
  for (const auto& e : entries)
    options.shards.push_back({{e.key, e.part, e.server, static_cast<std::size_t>(e.offset),
                               static_cast<std::size_t>(e.count)},
                              e.shard});
  switch (distributed.getCompression()) {
    case schema::KvCompression::NONE: options.compression = actors::kv_compression::none; break;
    case schema::KvCompression::TWO_BIT:
      options.compression = actors::kv_compression::two_bit;
      break;
    case schema::KvCompression::THRESHOLD:
      options.compression = actors::kv_compression::threshold;
      break;
  }
  options.two_bit.threshold =
    distributed.getTwoBitThreshold() / static_cast<float>(std::max<std::size_t>(batch_size, 1));
  options.threshold = threshold;
  options.server_optimizer = distributed.getServerOptimizer();
  options.joins = distributed.getKvstore() == schema::KvStoreSync::DIST_SYNC;
  return options;
}

const char* to_string(schema::KvStoreSync sync) {
  return sync == schema::KvStoreSync::DIST_ASYNC ? "dist_async" : "dist_sync";
}

} // namespace strom::runtime
