// The job_master's part in a kvstore job (mode kvstore): before the workers are assigned the
// job, each server node spawns the parameter_shards of its key ranges (with --replicas R, a
// replica of the ranges of the R - 1 servers before it too) and the job_master links each
// range's replicas into a chain; every round tells every shard its workers; a lost worker node
// is forgotten by the shards; a lost server node is a failover: each of its ranges goes on
// on its next replica, the chains are linked anew and the workers re-routed to the new heads
// (a range with no replica left fails the job); a server node that joins meanwhile takes a
// replica of each range that lost one, at the end of its chain. At the end the heads' counts
// go into the report and the server nodes drop the shards.

#include "strom/actors/kvstore/job_kvstore.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/job/job_master_steps.hpp"
#include "strom/log.hpp"

namespace strom::actors::job_steps {

namespace {

bool same_range(const kv_shard_entry& a, const kv_shard_entry& b) {
  return a.key == b.key && a.part == b.part;
}

/// The chain of every range in shard_replicas as links, version st.kvstore.chain_version, sent to
/// each server node holding a shard. Two servers chained either way get one connection, made
/// by the one with the lower node id: two made at once from both sides lost messages.
void link_chains(self_ptr self) {
  auto& st = self->state;
  const auto& all = st.kvstore.shard_replicas;
  std::map<std::uint64_t, chain_wiring> by_holder;
  std::set<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool has_next = i + 1 < all.size() && same_range(all[i], all[i + 1]);
    auto& wiring = by_holder[all[i].holder];
    wiring.job_id = st.status.job_id;
    wiring.links.push_back({st.kvstore.chain_version, all[i].shard,
                            has_next ? all[i + 1].shard : caf::actor{}});
    if (has_next && all[i + 1].holder != all[i].holder)
      pairs.emplace(std::min(all[i].holder, all[i + 1].holder),
                    std::max(all[i].holder, all[i + 1].holder));
  }
  for (const auto& [lower, higher] : pairs) {
    const auto endpoint = st.kvstore.server_endpoint_of.find(higher);
    if (endpoint != st.kvstore.server_endpoint_of.end() && !endpoint->second.empty())
      by_holder[lower].endpoints.push_back(endpoint->second);
  }
  for (auto& [holder, wiring] : by_holder)
    if (const auto member = st.members.find(holder); member != st.members.end())
      self->send(member->second.agent, std::move(wiring));
}

/// The heads of the ranges (position 0 after a loss is the first survivor), in buffer order.
std::vector<kv_shard_entry> heads_of(const std::vector<kv_shard_entry>& all) {
  std::vector<kv_shard_entry> heads;
  for (const auto& entry : all)
    if (heads.empty() || !same_range(heads.back(), entry))
      heads.push_back(entry);
  return heads;
}

/// Every shard has answered: the chains are linked, then the workers get the job with the
/// heads' handles.
void shards_served(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  std::sort(st.kvstore.shard_replicas.begin(), st.kvstore.shard_replicas.end(),
            [](const kv_shard_entry& a, const kv_shard_entry& b) {
              return std::tie(a.offset, a.position) < std::tie(b.offset, b.position);
            });
  st.kvstore.shards = heads_of(st.kvstore.shard_replicas);
  log::info("job_master: job {} holds its parameters in {} key ranges on {} servers, {} "
            "replicas each",
            st.status.job_id, st.kvstore.shards.size(), setup.servers.size(), st.report.replicas);
  if (st.report.replicas > 1) {
    st.kvstore.chain_version = 1;
    link_chains(self);
  }
  assign(self, setup);
}

} // namespace

bool is_server(const job_master_state& st, std::uint64_t node_id) {
  const auto member = st.members.find(node_id);
  return member != st.members.end() && member->second.status.role == node_role_server;
}

namespace {

/// Has server node `node_id` hold a replica of each key range whose chain lost one; false when
/// none did.
bool fill_chains(self_ptr self, const job_master_setup& setup, std::uint64_t node_id) {
  auto& st = self->state;
  shard_assignment work{st.status.job_id, setup.submission.job_text, setup.submission.source,
                        0, st.report.servers, st.report.replicas};
  for (const auto& head : st.kvstore.shards) {
    const auto& replicas = st.kvstore.shard_replicas;
    const auto held = std::count_if(replicas.begin(), replicas.end(),
                                    [&](const kv_shard_entry& e) { return same_range(e, head); });
    if (static_cast<std::uint32_t>(held) >= st.report.replicas)
      continue;
    auto wanted = head;
    wanted.position = static_cast<std::uint32_t>(held);
    work.ranges.push_back(wanted);
  }
  if (work.ranges.empty())
    return false;
  const auto started = self->clock().now();
  request_while_alive(self, st.awaiting, node_id, st.members.at(node_id).agent,
                      setup.timeouts.prepare_timeout, std::move(work))
    .then(
      [self, started](const shards_ready& ready) {
        auto& st = self->state;
        if (st.outcome)
          return;
        // Each new replica goes to the end of its range's chain.
        for (const auto& entry : ready.shards) {
          auto& replicas = st.kvstore.shard_replicas;
          auto last = std::find_if(replicas.rbegin(), replicas.rend(),
                                   [&](const kv_shard_entry& e) { return same_range(e, entry); });
          replicas.insert(last.base(), entry);
        }
        st.kvstore.server_endpoint_of[ready.node_id] = ready.endpoint;
        if (!ready.endpoint.empty())  // workers that join later connect to it too
          st.kvstore.server_endpoints.push_back(ready.endpoint);
        ++st.kvstore.chain_version;
        link_chains(self);
        log::info("job_master: job {}: server node {} holds replicas of {} key ranges ({:.3f} s)",
                  st.status.job_id, ready.node_id, ready.shards.size(),
                  seconds_between(started, self->clock().now()));
      },
      [self, node_id](caf::error& err) {
        self->state.members.erase(node_id);
        log::warning("job_master: job {}: server node {} took no replicas: {}",
                     self->state.status.job_id, node_id, error_text(self->system(), err));
      });
  return true;
}

} // namespace

bool take_server(self_ptr self, const job_master_setup& setup, const member_joined& joined) {
  auto& st = self->state;
  const auto node_id = joined.node.node_id;
  if (st.outcome || st.finishing || st.status.state != "training" || st.report.replicas < 2
      || st.members.count(node_id) > 0)
    return false;
  st.members[node_id] = job_node{joined.node, caf::actor_cast<job_agent_actor>(joined.agent)};
  const bool filling = fill_chains(self, setup, node_id);
  if (!filling)
    st.kvstore.spare_servers.push_back(node_id);
  log::info("job_master: job {} takes server node {}, which joined (membership epoch {}){}",
            st.status.job_id, node_id, joined.membership_epoch,
            filling ? "" : ", as a spare: no key range lacks a replica");
  return true;
}

void serve_then_assign(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (setup.servers.empty())
    return assign(self, setup);
  const auto servers = static_cast<std::uint32_t>(setup.servers.size());
  const auto replicas = std::max<std::uint32_t>(setup.submission.replicas, 1);
  if (replicas > servers)
    return fail_job(self, setup,
                    make_error(strom_error::bad_job,
                               fmt::format("distributed.replicas {} needs at least {} server "
                                           "nodes; the job has {}",
                                           replicas, replicas, servers)));
  st.report.servers = servers;
  st.report.replicas = replicas;
  const auto job_id = st.status.job_id;
  auto left = std::make_shared<std::size_t>(setup.servers.size());
  for (std::uint32_t s = 0; s < servers; ++s) {
    const auto& server = setup.servers[s];
    const auto node_id = server.status.node_id;
    shard_assignment work{job_id, setup.submission.job_text, setup.submission.source, s,
                          servers, replicas};
    work.resume = st.checkpoints.resumed;
    request_while_alive(self, st.awaiting, node_id, server.agent, setup.timeouts.prepare_timeout,
                        std::move(work))
      .then(
        [self, setup, left](const shards_ready& ready) {
          auto& st = self->state;
          if (st.outcome)
            return;
          st.kvstore.shard_replicas.insert(st.kvstore.shard_replicas.end(), ready.shards.begin(),
                                   ready.shards.end());
          st.kvstore.server_endpoint_of[ready.node_id] = ready.endpoint;
          if (!ready.endpoint.empty())
            st.kvstore.server_endpoints.push_back(ready.endpoint);
          if (--*left == 0)
            shards_served(self, setup);
        },
        [self, setup, node_id](caf::error& err) {
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::bad_job),
                              fmt::format("server node {} did not take its key ranges: {}",
                                          node_id, error_text(self->system(), err))));
        });
  }
}

void plan_shards_round(self_ptr self) {
  auto& st = self->state;
  if (st.kvstore.shards.empty())
    return;
  kv_round plan{st.round, st.status.epoch, {}};
  // A node pushes once a step, as its first worker, for all its workers (local aggregation).
  for (const auto& [node_id, work] : st.work)
    if (!work.empty())
      plan.workers.push_back(kv_worker_id(node_id, 0));
  // Every replica: the one that becomes head after a loss knows the round already.
  for (const auto& entry : st.kvstore.shard_replicas)
    self->send(entry.shard, plan);
}

void forget_on_shards(self_ptr self, std::uint64_t node_id) {
  for (const auto& entry : self->state.kvstore.shard_replicas)
    self->send(entry.shard, forget_atom_v, node_id);
}

void lose_server(self_ptr self, const job_master_setup& setup, const member_lost& lost) {
  auto& st = self->state;
  auto& spares = st.kvstore.spare_servers;
  const auto spare = std::find(spares.begin(), spares.end(), lost.node_id);
  if (spare != spares.end()) {  // it held nothing yet
    spares.erase(spare);
    return;
  }
  const auto started = self->clock().now();
  auto& all = st.kvstore.shard_replicas;
  const auto held = all.size();
  all.erase(std::remove_if(all.begin(), all.end(),
                           [&](const kv_shard_entry& e) { return e.holder == lost.node_id; }),
            all.end());
  if (all.size() == held) {  // taken, but lost before its replicas were filled: no failover
    log::info("job_master: job {}: server node {} lost before it held any key range",
              st.status.job_id, lost.node_id);
    return;
  }
  for (const auto& head : st.kvstore.shards)
    if (std::none_of(all.begin(), all.end(),
                     [&](const kv_shard_entry& e) { return same_range(e, head); }))
      return fail_job(self, setup,
                      make_error(strom_error::node_lost,
                                 fmt::format("parameter server node {} was lost ({}); key {} "
                                             "part {} has no replica left (--replicas {})",
                                             lost.node_id,
                                             error_text(self->system(), lost.reason), head.key,
                                             head.part, st.report.replicas)));
  auto heads = heads_of(all);
  kv_reroute moved{st.status.job_id, {}};
  for (std::size_t i = 0; i < heads.size(); ++i)
    if (heads[i].shard != st.kvstore.shards[i].shard) {
      moved.heads.push_back(heads[i]);
      const auto endpoint = st.kvstore.server_endpoint_of.find(heads[i].holder);
      if (endpoint != st.kvstore.server_endpoint_of.end() && !endpoint->second.empty()
          && std::find(moved.endpoints.begin(), moved.endpoints.end(), endpoint->second)
               == moved.endpoints.end())
        moved.endpoints.push_back(endpoint->second);
    }
  st.kvstore.shards = std::move(heads);
  ++st.report.server_failovers;
  ++st.kvstore.chain_version;
  link_chains(self);
  if (!moved.heads.empty())
    for (const auto node_id : st.nodes)
      if (const auto member = st.members.find(node_id); member != st.members.end())
        self->send(member->second.agent, moved);
  log::info("job_master: job {}: server node {} lost; {} key ranges moved to their next "
            "replica in {:.3f} s",
            st.status.job_id, lost.node_id, moved.heads.size(),
            seconds_between(started, self->clock().now()));
  if (!spares.empty() && fill_chains(self, setup, spares.front()))
    spares.erase(spares.begin());
}

void count_shards_then(self_ptr self, const job_master_setup& setup,
                       std::function<void()> next) {
  auto& st = self->state;
  if (st.kvstore.shards.empty())
    return next();
  auto left = std::make_shared<std::size_t>(st.kvstore.shards.size());
  auto then = std::make_shared<std::function<void()>>(std::move(next));
  for (const auto& entry : st.kvstore.shards)
    self->request(entry.shard, setup.timeouts.answer_timeout, stats_atom_v)
      .then(
        [self, left, then](const shard_stats& counted) {
          self->state.report.server_updates += counted.updates;
          if (--*left == 0)
            (*then)();
        },
        [self, setup](caf::error& err) {
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::node_failed),
                              "a parameter shard did not report: "
                                + error_text(self->system(), err)));
        });
}

} // namespace strom::actors::job_steps
