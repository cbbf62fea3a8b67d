#include "strom/actors/accumulator.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace strom::actors {

namespace {

void fail(caf::stateful_actor<accumulator_state>* self, std::string message) {
  self->quit(caf::make_error(caf::sec::runtime_error, "accumulator: " + std::move(message)));
}

bool round_complete(const accumulator_state& st) {
  bool any = false;
  for (std::size_t w = 0; w < st.contributed.size(); ++w) {
    if (!st.contributed[w] && !st.finished[w])
      return false;
    any = any || st.contributed[w];
  }
  return any;
}

/// The node's clock after the rounds sent so far: updates of its slowest worker still
/// training this epoch that those rounds include (all of them once every worker finished).
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

/// Encodes the round's sum, sends its frame (empty when nothing reached the threshold: the
/// header still moves the node's clock) and starts the next round.
void close_round(caf::stateful_actor<accumulator_state>* self, const accumulator_setup& setup) {
  auto& st = self->state;
  const auto encoded = st.encoder->encode({});
  ++st.stats.rounds;
  st.stats.dense_bytes_equivalent += sizeof(float) * setup.elements;
  st.stats.density_sum += st.encoder->last_density();
  for (std::size_t w = 0; w < st.contributed.size(); ++w)
    st.included[w] += st.contributed[w];
  std::fill(st.contributed.begin(), st.contributed.end(), 0);
  st.contributions = 0;
  const compute::encoded_update nothing{compute::encoding::threshold, st.encoder->threshold(),
                                        setup.elements, 0, {}};
  const compute::frame_header header{setup.node_id, 0, st.next_sequence, node_clock(st),
                                     st.epoch, 0};
  auto built = compute::build_update_frame(header, encoded ? *encoded : nothing, setup.frames);
  if (!built)
    return fail(self, built.err().message);
  ++st.next_sequence;
  if (encoded)
    ++st.stats.frames_sent;
  st.stats.bytes_sent += built->size();
  self->send(setup.relay, shared_frame{std::move(*built)});
}

} // namespace

caf::behavior accumulator(caf::stateful_actor<accumulator_state>* self, accumulator_setup setup) {
  auto& st = self->state;
  st.encoder.emplace(setup.elements, setup.encoding);
  st.contributed.assign(setup.workers, 0);
  st.finished.assign(setup.workers, 0);
  st.included.assign(setup.workers, 0);
  return {
    [self, setup](const worker_update& update) {
      auto& st = self->state;
      if (update.worker >= setup.workers)
        return fail(self, fmt::format("update from worker {}, but the node has {} workers",
                                      update.worker, setup.workers));
      if (!update.values || update.values->size() != setup.elements)
        return fail(self, fmt::format("update from worker {} has {} values, expected {}",
                                      update.worker, update.values ? update.values->size() : 0,
                                      setup.elements));
      // A worker ahead of the others closes the round instead of joining it twice: its
      // second update was computed before the first reached any replica, so summing both
      // into one frame doubles a stale step (seen diverging on a loaded machine).
      if (st.contributed[update.worker])
        close_round(self, setup);
      // The frame carries the change to add to the parameters: minus the update.
      st.encoder->add(*update.values, -1.0f);
      ++st.contributions;
      st.contributed[update.worker] = 1;
      st.epoch = update.epoch;
      if (round_complete(st))
        close_round(self, setup);
    },
    [self, setup](finished_atom, std::uint32_t worker, std::uint32_t epoch) {
      auto& st = self->state;
      if (worker >= setup.workers)
        return fail(self, fmt::format("worker {} finished, but the node has {} workers", worker,
                                      setup.workers));
      st.finished[worker] = 1;
      if (std::count(st.finished.begin(), st.finished.end(), 1)
          != static_cast<std::ptrdiff_t>(setup.workers)) {
        if (round_complete(st))
          close_round(self, setup);
        return;
      }
      if (st.contributions > 0)
        close_round(self, setup);
      std::fill(st.finished.begin(), st.finished.end(), 0);
      std::fill(st.included.begin(), st.included.end(), 0);
      self->send(setup.relay, drain_marker{setup.node_id, epoch});
    },
    [self](stats_atom) {
      auto stats = self->state.stats;
      stats.threshold = self->state.encoder->threshold();
      return stats;
    },
  };
}

} // namespace strom::actors
