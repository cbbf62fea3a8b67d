#pragma once
// Every message strom's actors exchange, in ONE type-ID block: two nodes can only talk when
// they agree on it (shared/CAF-0.17-NOTES.md, "Message types"). Bulk data travels in
// ref-counted buffers that local sends share and remote sends serialise once.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/all.hpp>

#include "strom/compute/frames/frame.hpp"

namespace strom::actors {

/// A Cap'n Proto update frame as a message: local sends share the immutable buffer, a remote
/// send writes its bytes once and the receiver reads them in place.
struct shared_frame {
  compute::frame value;  ///< the frame (stream header word + one segment)
};

/// One worker's update after a step, laid out like the model's parameters. The buffer is
/// pooled by the sending trainer and must not be modified by receivers.
struct worker_update {
  std::uint32_t worker = 0;     ///< worker slot on the node
  std::uint64_t iteration = 0;  ///< the worker's updater steps so far
  std::uint32_t epoch = 0;      ///< 0-based epoch
  std::shared_ptr<const std::vector<float>> values;  ///< the update to subtract
};

/// Progress of one trainer after one step.
struct step_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;    ///< 0-based
  float loss = 0.0f;          ///< the batch's mean loss
  std::uint64_t samples = 0;  ///< samples in the batch
};

/// A trainer went through its whole partition for one epoch.
struct epoch_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;     ///< 0-based
  double loss_sum = 0.0;       ///< sum of the batches' mean losses
  std::uint64_t batches = 0;
  std::uint64_t samples = 0;
  std::uint64_t iteration = 0; ///< the replica's updater steps after the epoch
};

/// A trainer applied every frame of an epoch (the drain marker reached it).
struct drain_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;                      ///< 0-based
  std::uint64_t updates_applied = 0;            ///< frames applied so far, in total
  std::uint64_t duplicate_updates_applied = 0;  ///< frames seen twice (must stay 0)
  std::uint64_t frames_rejected = 0;            ///< frames that did not fit the replica
};

/// Travels behind the last frame of an epoch, accumulator -> relay -> trainers: mailboxes
/// are FIFO per sender, so a trainer that sees it has applied every frame before it.
struct drain_marker {
  std::uint32_t epoch = 0;  ///< 0-based
};

/// What an accumulator sent so far.
struct accumulator_stats {
  std::uint64_t rounds = 0;          ///< sums encoded
  std::uint64_t frames_sent = 0;     ///< rounds that sent something
  std::uint64_t bytes_sent = 0;      ///< frame bytes
  std::uint64_t dense_bytes_equivalent = 0;  ///< 4 bytes per element per round
  double density_sum = 0.0;          ///< sum of each round's values sent / elements
  float threshold = 0.0f;            ///< the threshold the next round would use
};

/// What a relay saw so far.
struct relay_stats {
  std::uint64_t frames_forwarded = 0;  ///< new frames handed on
  std::uint64_t duplicates_dropped = 0;
  std::uint64_t frames_rejected = 0;   ///< frames that failed to read
};

// -- inspection (CAF 0.17 syntax) ------------------------------------------------------------

/// Largest float buffer accepted from outside: the Cap'n Proto Data limit, in floats.
inline constexpr std::size_t max_update_floats = compute::max_payload_bytes / sizeof(float);

namespace detail {

/// True for CAF's binary serializer and deserializer (not the to_string inspector).
template <class F>
inline constexpr bool is_binary_inspector = std::is_same_v<typename F::result_type, caf::error>;

/// Loads a frame after checking the announced length before allocating.
caf::error load_frame(caf::deserializer& source, compute::frame& target);
/// Writes a frame as one length-prefixed byte sequence.
caf::error save_frame(caf::serializer& sink, const compute::frame& value);
/// Loads a float buffer after checking the announced length before allocating.
caf::error load_floats(caf::deserializer& source, std::shared_ptr<const std::vector<float>>& target);
/// Writes a float buffer (null as empty) as one length-prefixed sequence.
caf::error save_floats(caf::serializer& sink, const std::shared_ptr<const std::vector<float>>& value);

} // namespace detail

template <class F>
typename F::result_type inspect(F& f, shared_frame& x) {
  if constexpr (!detail::is_binary_inspector<F>)
    return f(caf::meta::type_name("shared_frame"), x.value.size());
  else if constexpr (F::reads_state)
    return detail::save_frame(f, x.value);
  else
    return detail::load_frame(f, x.value);
}

template <class F>
typename F::result_type inspect(F& f, worker_update& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("worker_update"), x.worker, x.iteration, x.epoch);
  } else {
    if (auto err = f(x.worker, x.iteration, x.epoch))
      return err;
    if constexpr (F::reads_state)
      return detail::save_floats(f, x.values);
    else
      return detail::load_floats(f, x.values);
  }
}

template <class F>
typename F::result_type inspect(F& f, step_report& x) {
  return f(caf::meta::type_name("step_report"), x.worker, x.epoch, x.loss, x.samples);
}

template <class F>
typename F::result_type inspect(F& f, epoch_report& x) {
  return f(caf::meta::type_name("epoch_report"), x.worker, x.epoch, x.loss_sum, x.batches,
           x.samples, x.iteration);
}

template <class F>
typename F::result_type inspect(F& f, drain_report& x) {
  return f(caf::meta::type_name("drain_report"), x.worker, x.epoch, x.updates_applied,
           x.duplicate_updates_applied, x.frames_rejected);
}

template <class F>
typename F::result_type inspect(F& f, drain_marker& x) {
  return f(caf::meta::type_name("drain_marker"), x.epoch);
}

template <class F>
typename F::result_type inspect(F& f, accumulator_stats& x) {
  return f(caf::meta::type_name("accumulator_stats"), x.rounds, x.frames_sent, x.bytes_sent,
           x.dense_bytes_equivalent, x.density_sum, x.threshold);
}

template <class F>
typename F::result_type inspect(F& f, relay_stats& x) {
  return f(caf::meta::type_name("relay_stats"), x.frames_forwarded, x.duplicates_dropped,
           x.frames_rejected);
}

/// Registers every strom message type on `cfg` (call before creating the actor_system).
void register_message_types(caf::actor_system_config& cfg);

} // namespace strom::actors

CAF_BEGIN_TYPE_ID_BLOCK(strom, first_custom_type_id)

  CAF_ADD_TYPE_ID(strom, (strom::actors::shared_frame))
  CAF_ADD_TYPE_ID(strom, (strom::actors::worker_update))
  CAF_ADD_TYPE_ID(strom, (strom::actors::step_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::epoch_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::drain_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::drain_marker))
  CAF_ADD_TYPE_ID(strom, (strom::actors::accumulator_stats))
  CAF_ADD_TYPE_ID(strom, (strom::actors::relay_stats))

  // Atoms: at most 10 characters each (CAF 0.17 atom_value).
  CAF_ADD_ATOM(strom, strom::actors, step_atom, "step")
  CAF_ADD_ATOM(strom, strom::actors, start_atom, "start")
  CAF_ADD_ATOM(strom, strom::actors, finished_atom, "finished")
  CAF_ADD_ATOM(strom, strom::actors, subscribe_atom, "subscribe")
  CAF_ADD_ATOM(strom, strom::actors, add_peer_atom, "add_peer")
  CAF_ADD_ATOM(strom, strom::actors, stats_atom, "stats")

CAF_END_TYPE_ID_BLOCK(strom)
