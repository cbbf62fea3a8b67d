#include "strom/actors/cluster/local_node.hpp"

#include "strom/actors/sharing/relay.hpp"
#include "strom/actors/worker/trainer.hpp"

#include <string>
#include "strom/compute/data/partition.hpp"

namespace strom::actors {

std::vector<caf::actor> local_node::all() const {
  std::vector<caf::actor> everyone{relay};
  everyone.insert(everyone.end(), trainers.begin(), trainers.end());
  return everyone;
}

local_node spawn_local_node(caf::actor_system& system, const local_node_setup& setup) {
  const auto workers = static_cast<std::uint32_t>(setup.replicas.size());
  const auto total_workers = setup.total_workers == 0 ? workers : setup.total_workers;
  const auto origins =
    setup.origins.empty() ? std::vector<std::uint64_t>{setup.node_id} : setup.origins;
  local_node node;
  node.relay = setup.timeline ? system.spawn(traced_relay,
                                             setup.timeline->track(setup.node_id, relay_lane,
                                                                   "relay"))
                              : system.spawn(relay);
  const auto& first = *setup.replicas.front();
  const auto contributions =
    setup.averaging.frequency == 0
      ? 0
      : contribution_elements(first.net().parameters().size(), first.updater_state().size(),
                              setup.averaging);
  node.framer = std::make_shared<node_framer>(setup.node_id, workers,
                                              first.net().parameters().size(), setup.frames);
  const auto node_sums =
    contributions == 0 ? nullptr : std::make_shared<node_average>(workers, contributions);
  // A kvstore node pushes once a step for all its workers (trainer_kv.cpp).
  std::shared_ptr<kv_node_sum> kv_sums;
  if (!setup.kv.shards.empty() && workers > 1) {
    std::vector<std::span<const float>> gradients;
    for (const auto& replica : setup.replicas)
      gradients.push_back(replica->net().gradients());
    kv_sums = std::make_shared<kv_node_sum>(std::move(gradients));
  }
  for (std::uint32_t w = 0; w < workers; ++w) {
    trainer_setup one{w,
                      setup.replicas[w],
                      setup.train,
                      compute::partition(setup.train->size(), setup.first_worker + w,
                                         total_workers),
                      setup.seed,
                      setup.shuffle,
                      setup.batch_size,
                      origins,
                      setup.staleness,
                      setup.encoding,
                      setup.momentum_masking,
                      node.framer,
                      caf::actor_cast<trainer_relay_actor>(node.relay),
                      setup.supervisor,
                      setup.apply_own_update,
                      setup.park_spin,
                      setup.averaging,
                      node_sums,
                      setup.kv,
                      kv_sums};
    one.update_power = setup.update_power;
    one.workers_in_job = total_workers;
    one.speed = setup.speed;
    if (setup.timeline)
      one.track = setup.timeline->track(setup.node_id, w, "worker " + std::to_string(w));
    one.meter = setup.meter;
    // A metered (simulated) node's trainers run on its system's scheduler, which the
    // simulation drives from one thread.
    node.trainers.push_back(setup.meter ? system.spawn(trainer, std::move(one))
                                        : system.spawn<caf::detached>(trainer, std::move(one)));
    caf::anon_send(node.relay, subscribe_atom_v, node.trainers.back());
  }
  for (const auto& trainer : node.trainers)
    for (const auto& sibling : node.trainers)
      if (sibling != trainer)
        caf::anon_send(trainer, siblings_atom_v, sibling);
  return node;
}

} // namespace strom::actors
