#pragma once
// Spawns one node's gradient-sharing actors in this process: a relay and one detached
// trainer per replica, sharing one node_framer, wired together (each trainer -> its siblings
// and the relay; relay -> trainers for the other nodes' frames).
// A later multi-node step connects relays with add_peer_atom; nothing here changes.

#include <cstdint>
#include <memory>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/protocol/roles.hpp"
#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/actors/kvstore/kv_pusher.hpp"
#include "strom/actors/sharing/node_framer.hpp"
#include "strom/actors/averaging/parameter_averaging.hpp"
#include "strom/actors/sim_seams.hpp"
#include "strom/actors/worker/timeline.hpp"
#include "strom/actors/timing.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/data/dataset.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/replica.hpp"

namespace strom::actors {

/// What a node is built from.
struct local_node_setup {
  std::uint64_t node_id = 0;                                ///< origin of its frames
  std::vector<std::shared_ptr<compute::replica>> replicas;  ///< one per worker slot, equal
  std::shared_ptr<const compute::dataset> train;            ///< partitioned among the slots
  std::vector<std::uint64_t> origins;  ///< every node whose frames reach this one, itself
                                       ///< included; empty means {node_id}
  std::uint32_t first_worker = 0;   ///< global rank of worker slot 0 across the nodes
  std::uint32_t total_workers = 0;  ///< data partitions over all nodes; 0: the replicas
  std::uint32_t staleness = 1;      ///< updates a trainer may run ahead of any origin; 0: sync
  std::uint64_t seed = 0;                                   ///< the job seed
  bool shuffle = true;
  std::size_t batch_size = 1;
  compute::threshold_encoder_options encoding;  ///< each worker's encoder settings
  bool momentum_masking = true;  ///< clear the momentum of the elements a worker sent
  bool apply_own_update = true;  ///< a worker applies its own update at once (trainer.hpp)
  /// How the workers' updates combine (trainer_setup::update_power).
  float update_power = 0.0f;
  compute::frame_options frames;
  trainer_supervisor_actor supervisor;  ///< receives the trainers' reports
  caf::timespan park_spin = timing{}.park_spin;  ///< the trainers' (timing.hpp)
  averaging_options averaging;  ///< parameter averaging instead of sharing, with a frequency
  kv_options kv;  ///< parameter servers instead of sharing, with shards
  /// Where the trainers and the relay record what they do (--timeline); null: nowhere.
  std::shared_ptr<timeline_tracks> timeline;
  /// The trainers' speed factor over the epochs (compute_slowdown.hpp, a testing aid).
  node_speed speed{};
  /// Set in a live simulation: the trainers run on the system's scheduler and tell it what
  /// they compute (sim_seams.hpp).
  std::shared_ptr<compute_meter> meter{};
};

/// Handles of a node's actors; keeping them keeps the actors alive.
struct local_node {
  caf::actor relay;
  std::vector<caf::actor> trainers;     ///< by worker slot
  std::shared_ptr<node_framer> framer;  ///< what the node sent

  /// Every actor of the node.
  std::vector<caf::actor> all() const;
};

/// Spawns and wires the node's actors; the trainers wait for (start_atom, epoch). Worker w
/// trains partition first_worker + w of total_workers.
local_node spawn_local_node(caf::actor_system& system, const local_node_setup& setup);

} // namespace strom::actors
