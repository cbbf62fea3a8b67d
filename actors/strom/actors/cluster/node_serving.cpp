// The node agent's serving side (node_agent.hpp): a server node's parameter shards of a
// kvstore job and their replica chains' connections, a worker node's stages of a pipeline job,
// and the connections to the servers a node's workers push to.

#include "strom/actors/cluster/node_agent_steps.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "strom/actors/errors.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace {

/// The refusal of a node that already runs or serves a job; none when it is free.
std::optional<caf::error> busy_refusal(const node_agent_state& st) {
  if (!st.run && !st.served)
    return std::nullopt;
  return make_error(strom_error::node_busy,
                    fmt::format("node {} already runs job {}", st.node_id,
                                st.run ? st.run->job_id : st.served->job_id));
}

} // namespace

using agent_steps::guarded;
using agent_steps::run_aside;

std::vector<std::shared_ptr<void>>
agent_steps::connect_servers(std::uint64_t node, const std::vector<std::string>& endpoints,
                             const relay_connector& connect) {
  std::vector<std::shared_ptr<void>> links;
  for (const auto& endpoint : endpoints) {
    auto link = guarded<relay_link>([&] { return connect(endpoint); });
    if (link)
      links.push_back(link->connection);
    else
      log::warning("node {}: reaches the server at {} through the scheduler: {}", node, endpoint,
                   link.err().message);
  }
  return links;
}

caf::result<shards_ready> agent_steps::serve(self_ptr self, const node_agent_setup& setup,
                                             const shard_assignment& work) {
  auto& st = self->state;
  if (!setup.serve)
    return make_error(strom_error::bad_job,
                      fmt::format("node {} holds no parameter shards: it joined as a worker",
                                  st.node_id));
  if (auto busy = busy_refusal(st))
    return std::move(*busy);
  auto built = setup.serve(work);
  if (!built)
    return make_error(strom_error::bad_job, built.err().message);
  shards_ready ready{work.job_id, st.node_id, {}};
  served_job served;
  served.job_id = work.job_id;
  for (auto& one : *built) {
    const auto range = one.range;
    const auto position = one.position;
    auto shard = self->spawn(parameter_shard, std::move(one));
    self->monitor(shard);
    served.shards.push_back(shard);
    ready.shards.push_back({range.key, range.part, range.server, range.offset, range.count,
                            std::move(shard), position, st.node_id});
  }
  // Workers connect here, so that their pushes do not pass through the scheduler.
  if (setup.publish_relay && !served.shards.empty()) {
    auto published =
      guarded<published_relay>([&] { return setup.publish_relay(served.shards.front()); });
    if (published) {
      ready.endpoint = published->endpoint;
      served.port = published->port;
    } else {
      log::warning("node {}: workers reach job {}'s shards through the scheduler: {}",
                   st.node_id, work.job_id, published.err().message);
    }
  }
  log::info("node {}: holds {} key ranges of job {}{}", st.node_id, ready.shards.size(),
            work.job_id, ready.endpoint.empty() ? "" : " at " + ready.endpoint);
  st.served = std::move(served);
  return ready;
}

void agent_steps::wire_chains(self_ptr self, const node_agent_setup& setup,
                              const chain_wiring& wiring) {
  auto& st = self->state;
  if (!st.served || st.served->job_id != wiring.job_id
      || (wiring.links.empty() && st.served->subnets.empty()))
    return;
  const auto version =
    wiring.links.empty() ? ++st.served->stage_wirings : wiring.links.front().version;
  auto connections = std::make_shared<std::vector<std::shared_ptr<void>>>();
  st.served->wiring[version] = {wiring.links, connections};
  run_aside(self, [connections, endpoints = wiring.endpoints, connect = setup.connect_relay,
                   node = st.node_id, job_id = wiring.job_id,
                   version](caf::blocking_actor* helper, const caf::actor& agent) {
    if (connect)
      *connections = connect_servers(node, endpoints, connect);
    helper->send(agent, wired_atom_v, job_id, version);
  });
}

void agent_steps::chains_wired(self_ptr self, std::uint64_t job_id, std::uint64_t version) {
  auto& st = self->state;
  if (!st.served || st.served->job_id != job_id)
    return;
  auto found = st.served->wiring.find(version);
  if (found == st.served->wiring.end())
    return;
  auto& [links, connections] = found->second;
  for (auto& connection : *connections)
    st.served->chain_connections.push_back(std::move(connection));
  for (const auto& link : links)
    self->send(link.shard, link);
  st.served->wiring.erase(found);
}

void agent_steps::reach_new_heads(self_ptr self, const node_agent_setup& setup,
                                  const kv_reroute& reroute) {
  auto& st = self->state;
  if (!st.run || st.run->job_id != reroute.job_id || !setup.connect_relay)
    return;
  std::vector<std::string> fresh;
  for (const auto& endpoint : reroute.endpoints)
    if (st.run->servers_reached.insert(endpoint).second)
      fresh.push_back(endpoint);
  if (fresh.empty())
    return;
  auto links = std::make_shared<std::vector<std::shared_ptr<void>>>();
  st.run->later_server_links.push_back(links);
  run_aside(self, [links, fresh, connect = setup.connect_relay,
                   node = st.node_id](caf::blocking_actor*, const caf::actor&) {
    *links = connect_servers(node, fresh, connect);
    log::info("node {}: reaches {} of {} new head server{} directly", node, links->size(),
              fresh.size(), fresh.size() == 1 ? "" : "s");
  });
}

caf::result<stage_ready> agent_steps::run_stage(self_ptr self, const node_agent_setup& setup,
                                                const stage_assignment& work) {
  auto& st = self->state;
  if (!setup.stage)
    return make_error(strom_error::bad_job,
                      fmt::format("node {} runs no pipeline stage: it joined as a server",
                                  st.node_id));
  // A stage of the job this node already runs a stage of: a lost neighbour's, merged in.
  const bool merged = st.served && st.served->job_id == work.job_id && !st.served->subnets.empty();
  if (auto busy = busy_refusal(st); busy && !merged)
    return std::move(*busy);
  auto built = setup.stage(work);
  if (!built)
    return make_error(strom_error::bad_job, built.err().message);
  built->speed = setup.speed;
  built->master = caf::actor_cast<caf::actor_addr>(self->current_sender());
  stage_ready ready{work.job_id, st.node_id, {}};
  // Not detached, unlike a trainer: its handle travels to the other stages' nodes, whose
  // proxies keep it from being destroyed until they go, and a detached actor's thread waits
  // for that, which held up a node's shutdown (seen in 1 of 5 in-process runs).
  auto stage = self->spawn(subnet, std::move(*built));
  self->monitor(stage);
  ready.subnet = stage;
  if (merged) {  // its neighbours reach this node already, or are told to connect
    log::info("node {}: also runs stage {} of {} of job {} (layers [{}, {}))", st.node_id,
              work.stage + 1, work.stages, work.job_id, work.first_layer, work.end_layer);
    st.served->subnets.push_back(std::move(stage));
    return ready;
  }
  served_job served{work.job_id, {}, {}, {stage}, {}, {}};
  // The neighbouring stages' nodes connect here: activations go from node to node.
  if (setup.publish_relay) {
    auto published = guarded<published_relay>([&] { return setup.publish_relay(stage); });
    if (published) {
      ready.endpoint = published->endpoint;
      served.port = published->port;
    } else {
      log::warning("node {}: job {}'s neighbouring stages reach its stage through the "
                   "scheduler: {}", st.node_id, work.job_id, published.err().message);
    }
  }
  log::info("node {}: runs stage {} of {}{} of job {} (layers [{}, {})){}", st.node_id,
            work.stage + 1, work.stages,
            work.pipelines > 1 ? fmt::format(" in copy {} of {}", work.pipeline + 1,
                                             work.pipelines)
                               : "",
            work.job_id, work.first_layer, work.end_layer,
            ready.endpoint.empty() ? "" : " at " + ready.endpoint);
  st.served = std::move(served);
  return ready;
}

void agent_steps::retire_stages(self_ptr self, const stage_retire& retire) {
  auto& st = self->state;
  if (!st.served || st.served->job_id != retire.job_id)
    return;
  auto& subnets = st.served->subnets;
  for (const auto& old : retire.subnets) {
    const auto found = std::find(subnets.begin(), subnets.end(), old);
    if (found == subnets.end())
      continue;
    end_actor(self, *found);
    subnets.erase(found);
  }
}

bool agent_steps::is_served_shard(const node_agent_state& st, const caf::actor_addr& source) {
  return st.served
         && (std::any_of(st.served->shards.begin(), st.served->shards.end(),
                         [&](const caf::actor& shard) { return shard.address() == source; })
             || std::any_of(st.served->subnets.begin(), st.served->subnets.end(),
                            [&](const caf::actor& stage) { return stage.address() == source; }));
}

} // namespace strom::actors
