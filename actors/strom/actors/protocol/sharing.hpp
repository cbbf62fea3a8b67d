#pragma once
// Sharing updates between nodes: trainers, node_framer and relays pass update frames and drain
// markers; the job_master wires a mesh's relays (topology_update) and asks relays what they
// counted of a lost origin (origin_frames); framers and relays report their figures.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "strom/actors/protocol/frame_inspection.hpp"
#include "strom/actors/sharing/tensor_sharing.hpp"
#include "strom/compute/frames/frame.hpp"

namespace strom::actors {

/// A Cap'n Proto update frame as a message: local sends share the immutable buffer, a remote
/// send writes its bytes once and the receiver reads them in place.
struct shared_frame {
  compute::frame value;  ///< the frame (stream header word + one segment)
};

template <class F>
typename F::result_type inspect(F& f, shared_frame& x) {
  return detail::inspect_frame(f, "shared_frame", x.value, compute::max_frame_bytes);
}

/// A relay's count of one origin's frames in that origin's latest round: the answer to
/// (forget_atom, origin), after which the relay drops the origin's frames. Frames a relay
/// counted went on to every peer, so in the plain topology the hub's count is what every
/// surviving node applies.
struct origin_frames {
  std::uint64_t origin = 0;
  std::uint32_t round = 0;
  std::vector<std::uint64_t> frames;  ///< by worker slot, in `round`
  bool drained = false;               ///< the origin's drain marker of `round` passed
};

template <class F>
typename F::result_type inspect(F& f, origin_frames& x) {
  return f(caf::meta::type_name("origin_frames"), x.origin, x.round, x.frames, x.drained);
}

/// Travels behind the last frame of a node's epoch, from its last trainer to finish to the
/// other trainers and through the relays: mailboxes are FIFO per sender and every frame of
/// the node was sent before it, so a trainer that sees it has applied every frame before it.
struct drain_marker {
  std::uint64_t origin = 0;  ///< node whose workers all framed their last update of the epoch
  std::uint32_t epoch = 0;   ///< 0-based
};

template <class F>
typename F::result_type inspect(F& f, drain_marker& x) {
  return f(caf::meta::type_name("drain_marker"), x.origin, x.epoch);
}

/// What a node framed so far (node_framer).
struct framing_stats {
  std::uint64_t updates = 0;         ///< worker updates framed (one frame each)
  std::uint64_t frames_sent = 0;     ///< of them, frames that carried something
  std::uint64_t bytes_sent = 0;      ///< frame bytes
  std::uint64_t dense_bytes_equivalent = 0;  ///< 4 bytes per element per update
  double density_sum = 0.0;          ///< sum of each update's values sent / elements
  float threshold = 0.0f;            ///< the threshold of the latest update
  std::uint64_t averages = 0;          ///< parameter averages the node's workers took part in
  std::uint64_t push_bytes = 0;        ///< kvstore: frame bytes pushed to the shards
  std::uint64_t push_dense_bytes = 0;  ///< kvstore: what fp32 pushes would have been
  std::uint64_t pull_bytes = 0;        ///< kvstore: frame bytes of the shards' answers
  std::vector<tensor_sharing> tensors; ///< each tensor's sharing, over the node's workers
};

template <class F>
typename F::result_type inspect(F& f, framing_stats& x) {
  return f(caf::meta::type_name("framing_stats"), x.updates, x.frames_sent, x.bytes_sent,
           x.dense_bytes_equivalent, x.density_sum, x.threshold, x.averages, x.push_bytes,
           x.push_dense_bytes, x.pull_bytes, x.tensors);
}

/// What a relay saw so far.
struct relay_stats {
  std::uint64_t frames_forwarded = 0;  ///< new frames handed on
  std::uint64_t duplicates_dropped = 0;
  std::uint64_t frames_rejected = 0;   ///< frames that failed to read
  std::uint64_t bytes_received = 0;    ///< frame bytes that came from peer relays
  std::uint64_t averaging_bytes = 0;   ///< frame bytes of average sums sent to peer relays
};

template <class F>
typename F::result_type inspect(F& f, relay_stats& x) {
  return f(caf::meta::type_name("relay_stats"), x.frames_forwarded, x.duplicates_dropped,
           x.frames_rejected, x.bytes_received, x.averaging_bytes);
}

/// job_master -> node_agent of a mesh job's non-root node, before the first epoch, when the
/// node joins, or when its parent was lost: connect your relay to your parent's (both add the
/// other as a peer), then answer wired_atom.
struct topology_update {
  std::uint64_t job_id = 0;
  std::uint64_t version = 0;         ///< of the job's topology_plan
  std::uint64_t parent = 0;          ///< the parent's node id
  std::string parent_endpoint;       ///< HOST:PORT of the parent's relay (node_ready)
  /// A repair after a loss: both relays first send each other what they kept of the round
  /// (relay.hpp).
  bool resend = false;
};

template <class F>
typename F::result_type inspect(F& f, topology_update& x) {
  return f(caf::meta::type_name("topology_update"), x.job_id, x.version, x.parent, x.resend,
           x.parent_endpoint);
}

} // namespace strom::actors
