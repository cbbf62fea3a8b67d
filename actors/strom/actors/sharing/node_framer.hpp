#pragma once
// The node's framing state, shared by its trainers: each trainer frames its own encoded
// update here and sends the frame itself, to its sibling trainers and to the relay. A sibling
// then has it after one mailbox hop; through an accumulator actor and the relay it took three
// thread wake-ups, which at staleness 0 every step waits for (measured on 2 workers: 6-9% of
// the training time parked). Every update makes a frame, empty (header only) when nothing
// reached the threshold, because the header's `iteration` is the node's clock: how many of
// this epoch's updates of the node's slowest worker (still training) the frames framed so far
// include. Trainers bound their staleness by it. The last worker to finish an epoch sends the
// drain marker, behind every frame of the node.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "strom/actors/messages.hpp"
#include "strom/compute/codecs/encoded_update.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors {

/// A frame and the header it was stamped with, so that its sender need not read it back.
struct framed_update {
  compute::frame frame;
  compute::frame_header header;
};

/// Frames the updates of one node's workers in one per-origin sequence (thread-safe).
class node_framer {
public:
  /// A framer for `workers` trainers of node `node_id` whose model has `elements` parameters.
  node_framer(std::uint64_t node_id, std::uint32_t workers, std::size_t elements,
              compute::frame_options options);

  /// Frames `worker`'s update of `epoch` (an empty payload when nothing passed the
  /// threshold), stamped with the next
  /// sequence number and the node's clock, and counts it. Refuses, counting nothing, a worker
  /// slot, size, encoding or payload the node does not have.
  result<framed_update> frame(std::uint32_t worker, std::uint32_t epoch,
                              const compute::encoded_update& update);

  /// Takes `worker`'s latest tensor figures (its encoder's, tensor_sharing.hpp); stats()
  /// adds up every worker's.
  void note_tensors(std::uint32_t worker, const std::vector<tensor_sharing>& figures);

  /// Counts a parameter average the node's workers took part in (its sum complete).
  void count_average();
  /// Counts a kvstore worker's pushes and the answers it took (kv_pusher).
  void count_kv(std::uint64_t push_bytes, std::uint64_t push_dense_bytes,
                std::uint64_t pull_bytes);

  /// Marks `worker` done with the current epoch; true for the last worker of the node, which
  /// sends the drain marker. The next epoch starts from a zero clock.
  bool finish(std::uint32_t worker);

  /// What the node framed so far.
  framing_stats stats() const;

  /// The origin of the node's frames.
  std::uint64_t node_id() const noexcept { return node_id_; }

private:
  std::uint64_t clock() const;  // with mutex_ held

  const std::uint64_t node_id_;
  const std::size_t elements_;
  const compute::frame_options options_;
  mutable std::mutex mutex_;
  std::vector<char> finished_;           // per worker: done with this epoch's partition
  std::vector<std::uint64_t> included_;  // per worker: its updates in this epoch's frames
  std::uint64_t next_sequence_ = 0;
  framing_stats stats_;
  std::vector<std::vector<tensor_sharing>> tensors_;  // per worker: its latest figures
};

} // namespace strom::actors
