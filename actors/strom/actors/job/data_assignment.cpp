#include "strom/actors/job/data_assignment.hpp"

#include <algorithm>

#include "strom/compute/data/partition.hpp"

namespace strom::actors {

namespace {

/// Batches that `samples` samples make, the last one partial.
std::uint64_t batches_in(std::uint64_t samples, const data_plan& data) {
  return (samples + data.batch_size - 1) / data.batch_size;
}

} // namespace

std::map<std::uint64_t, std::vector<round_work>> plan_round(
  const std::vector<node_workers>& nodes, std::uint32_t round, std::uint32_t epoch,
  const data_plan& data, const std::vector<std::uint32_t>* makeup) {
  std::uint32_t ranks = 0;
  std::vector<std::uint64_t> origins;
  for (const auto& node : nodes) {
    ranks += node.workers;
    origins.push_back(node.node);
  }
  const auto samples = makeup ? makeup->size() : data.train_samples;
  std::map<std::uint64_t, std::vector<round_work>> plan;
  std::uint32_t rank = 0;
  for (const auto& node : nodes) {
    auto& works = plan[node.node];
    for (std::uint32_t w = 0; w < node.workers; ++w, ++rank) {
      round_work work{round, epoch, rank, ranks, {}, origins};
      if (makeup) {
        const auto share = compute::partition(samples, rank, ranks);
        work.ranks = 0;
        work.indices.assign(makeup->begin() + static_cast<std::ptrdiff_t>(share.begin),
                            makeup->begin() + static_cast<std::ptrdiff_t>(share.end));
      }
      works.push_back(std::move(work));
    }
  }
  if (ranks == 0)
    return plan;
  // Shares differ by at most a sample: the fewest batches are the last rank's, the most the
  // first's.
  const auto fewest = batches_in(compute::partition(samples, ranks - 1, ranks).size(), data);
  const auto most = batches_in(compute::partition(samples, 0, ranks).size(), data);
  for (auto& [node, works] : plan)
    for (auto& work : works) {
      work.common_steps = fewest;
      work.most_steps = most;
    }
  return plan;
}

std::vector<std::uint32_t> samples_of(const round_work& work, const data_plan& data) {
  if (work.ranks == 0)
    return work.indices;
  return compute::epoch_order(compute::partition(data.train_samples, work.rank, work.ranks),
                              data.seed, work.epoch, data.shuffle);
}

std::uint64_t batches_of(const std::vector<round_work>& work, const data_plan& data) {
  std::uint64_t batches = 0;
  for (const auto& one : work) {
    const std::uint64_t samples =
      one.ranks == 0 ? one.indices.size()
                     : compute::partition(data.train_samples, one.rank, one.ranks).size();
    batches += batches_in(samples, data);
  }
  return batches;
}

round_remainder remainder_of(const std::vector<round_work>& work,
                             const std::vector<std::uint64_t>& frames, const data_plan& data) {
  round_remainder left;
  for (std::size_t w = 0; w < work.size(); ++w) {
    const auto order = samples_of(work[w], data);
    const std::uint64_t steps = w < frames.size() ? frames[w] : 0;
    const auto done = std::min<std::uint64_t>(steps * data.batch_size, order.size());
    left.trained_samples += done;
    left.trained_batches += batches_in(done, data);
    left.untrained.insert(left.untrained.end(), order.begin() + static_cast<std::ptrdiff_t>(done),
                          order.end());
  }
  return left;
}

} // namespace strom::actors
