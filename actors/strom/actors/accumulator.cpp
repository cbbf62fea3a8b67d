#include "strom/actors/accumulator.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace strom::actors {

namespace {

void fail(caf::stateful_actor<accumulator_state>* self, std::string message) {
  self->quit(caf::make_error(caf::sec::runtime_error, "accumulator: " + std::move(message)));
}

/// The node's clock after the frames sent so far: updates of its slowest worker still
/// training this epoch that they include (all of them once every worker finished).
std::uint64_t node_clock(const accumulator_state& st) {
  std::uint64_t slowest = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t most = 0;
  for (std::size_t w = 0; w < st.included.size(); ++w) {
    most = std::max(most, st.included[w]);
    if (!st.finished[w])
      slowest = std::min(slowest, st.included[w]);
  }
  return slowest == std::numeric_limits<std::uint64_t>::max() ? most : slowest;
}

/// What is wrong with an update from the node's own trainer, or nothing.
std::string check(const worker_update& update, const accumulator_setup& setup) {
  if (update.worker >= setup.workers)
    return fmt::format("update from worker {}, but the node has {} workers", update.worker,
                       setup.workers);
  if (update.elements != setup.elements)
    return fmt::format("update from worker {} covers {} elements, expected {}", update.worker,
                       update.elements, setup.elements);
  const auto enc = static_cast<compute::encoding>(update.enc);
  if (enc != compute::encoding::threshold && enc != compute::encoding::bitmap)
    return fmt::format("update from worker {} has encoding {}, expected threshold or bitmap",
                       update.worker, update.enc);
  if ((update.values == 0) != update.payload.empty())
    return fmt::format("update from worker {} carries {} values in {} payload words",
                       update.worker, update.values, update.payload.size());
  return {};
}

} // namespace

caf::behavior accumulator(caf::stateful_actor<accumulator_state>* self, accumulator_setup setup) {
  auto& st = self->state;
  st.finished.assign(setup.workers, 0);
  st.included.assign(setup.workers, 0);
  return {
    [self, setup](const worker_update& update) {
      auto& st = self->state;
      if (auto problem = check(update, setup); !problem.empty())
        return fail(self, std::move(problem));
      ++st.included[update.worker];
      const compute::encoded_update encoded{
        static_cast<compute::encoding>(update.enc), update.threshold, setup.elements,
        update.values, std::as_bytes(std::span<const std::uint32_t>(update.payload))};
      const compute::frame_header header{setup.node_id, update.worker, st.next_sequence,
                                         node_clock(st), update.epoch, 0};
      auto built = compute::build_update_frame(header, encoded, setup.frames);
      if (!built)
        return fail(self, built.err().message);
      ++st.next_sequence;
      ++st.stats.updates;
      if (update.values > 0)
        ++st.stats.frames_sent;
      st.stats.bytes_sent += built->size();
      st.stats.dense_bytes_equivalent += sizeof(float) * setup.elements;
      st.stats.density_sum +=
        static_cast<double>(update.values) / static_cast<double>(setup.elements);
      st.stats.threshold = update.threshold;
      self->send(setup.relay, shared_frame{std::move(*built)});
    },
    [self, setup](finished_atom, std::uint32_t worker, std::uint32_t epoch) {
      auto& st = self->state;
      if (worker >= setup.workers)
        return fail(self, fmt::format("worker {} finished, but the node has {} workers", worker,
                                      setup.workers));
      st.finished[worker] = 1;
      if (std::count(st.finished.begin(), st.finished.end(), 1)
          != static_cast<std::ptrdiff_t>(setup.workers))
        return;
      std::fill(st.finished.begin(), st.finished.end(), 0);
      std::fill(st.included.begin(), st.included.end(), 0);
      self->send(setup.relay, drain_marker{setup.node_id, epoch});
    },
    [self](stats_atom) { return self->state.stats; },
  };
}

} // namespace strom::actors
