#include "strom/actors/accumulator.hpp"

#include <algorithm>

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

/// Encodes the round's sum, sends the frame (if anything reached the threshold) and starts
/// the next round.
void close_round(caf::stateful_actor<accumulator_state>* self, const accumulator_setup& setup) {
  auto& st = self->state;
  const auto encoded = st.encoder->encode(st.sum);
  ++st.stats.rounds;
  st.stats.dense_bytes_equivalent += sizeof(float) * setup.elements;
  st.stats.density_sum += st.encoder->last_density();
  std::fill(st.sum.begin(), st.sum.end(), 0.0f);
  std::fill(st.contributed.begin(), st.contributed.end(), 0);
  if (!encoded)
    return;
  const compute::frame_header header{setup.node_id, 0, st.next_sequence, st.stats.rounds,
                                     st.epoch, 0};
  auto built = compute::build_update_frame(header, *encoded, setup.frames);
  if (!built)
    return fail(self, built.err().message);
  ++st.next_sequence;
  ++st.stats.frames_sent;
  st.stats.bytes_sent += built->size();
  self->send(setup.relay, shared_frame{std::move(*built)});
}

} // namespace

caf::behavior accumulator(caf::stateful_actor<accumulator_state>* self, accumulator_setup setup) {
  auto& st = self->state;
  st.encoder.emplace(setup.elements, setup.encoding);
  st.sum.assign(setup.elements, 0.0f);
  st.contributed.assign(setup.workers, 0);
  st.finished.assign(setup.workers, 0);
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
      const float* values = update.values->data();
      float* sum = st.sum.data();
      for (std::size_t i = 0; i < setup.elements; ++i)
        sum[i] -= values[i];
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
      if (std::find(st.contributed.begin(), st.contributed.end(), 1) != st.contributed.end())
        close_round(self, setup);
      std::fill(st.finished.begin(), st.finished.end(), 0);
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
