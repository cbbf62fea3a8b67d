// How a job_master meets nodes lost and joining (job_master.hpp): the remap, the survivors'
// counts and the makeup round of a loss; a joiner's assignment, wiring and restore; the pause
// below --min-nodes.
#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/actors/job/job_master_steps.hpp"
#include "strom/actors/sharing/job_topology.hpp"
#include "strom/log.hpp"

namespace strom::actors::job_steps {

/// The samples of `node`'s workers in this round that the hub did not pass on a frame for
/// go to the makeup round; those it did count as trained. A node lost after its frames all
/// passed (drained) but before its report came trained its whole share: all of it counts.
void take_over_share(self_ptr self, std::uint64_t node, const origin_frames& passed) {
  auto& st = self->state;
  const auto work = st.work.find(node);
  if (work == st.work.end())
    return;
  const auto left = remainder_of(work->second,
                                 passed.round == st.round ? passed.frames
                                                          : std::vector<std::uint64_t>{},
                                 st.data);
  st.makeup.insert(st.makeup.end(), left.untrained.begin(), left.untrained.end());
  st.epoch_done.samples += left.trained_samples;
  st.epoch_done.batches += left.trained_batches;
  if (const auto seen = st.progress.find(node); seen != st.progress.end())
    st.report.samples_redone += seen->second.samples > left.trained_samples
                                  ? seen->second.samples - left.trained_samples
                                  : 0;
}

/// The topology without `node`; the root too can go (the hub is the master's, not the root's).
void remap_without(job_master_state& st, std::uint64_t node) {
  const auto version = st.plan.version + 1;
  if (auto remapped = without_node(st.plan, node))
    st.plan = std::move(*remapped);
  else if (auto replanned =
             plan_topology(st.nodes, topology_options{st.plan.kind, st.plan.fanout})) {
    st.plan = std::move(*replanned);
    st.plan.version = version;
  }
  st.report.topology.version = st.plan.version;
  st.status.topology = status_line_of(st.plan);
}

/// Lets a joining node go: its job actors stop, and the scheduler frees it.
void drop_joiner(self_ptr self, const job_master_setup& setup, std::uint64_t node,
                 const std::string& why) {
  auto& st = self->state;
  const auto joiner = st.joining.find(node);
  if (joiner == st.joining.end())
    return;
  log::warning("job_master: job {} lets {} go: {}", st.status.job_id,
               describe(joiner->second.node.status), why);
  // Asked, not told: the node answers a stop with its counts, which must not arrive here as
  // an unexpected message (CAF would answer the node with an error that ends its agent).
  request_while_alive(self, st.awaiting, node, joiner->second.node.agent,
                      setup.timeouts.answer_timeout, stop_atom_v, st.status.job_id)
    .then([](const node_sharing_report&) {}, [](caf::error&) {});
  self->send(setup.scheduler, forget_atom_v, st.status.job_id, node);
  st.joining.erase(joiner);
  st.members.erase(node);
  st.prepared.erase(node);
  if (st.plan.links.count(node) > 0) {  // a mesh joiner wired before its snapshot
    remap_without(st, node);
    send_average_trees(self, setup.submission);
  }
}

namespace {

/// `lost`'s node leaves the job's nodes and topology (counted in the report; `moment` for
/// the log); false when no node is left, and the job then failed.
bool drop_member(self_ptr self, const job_master_setup& setup, const member_lost& lost,
                 const char* moment) {
  auto& st = self->state;
  const auto node = lost.node_id;
  const auto described = describe(st.members.at(node).status);
  st.members.erase(node);
  st.nodes.erase(std::find(st.nodes.begin(), st.nodes.end(), node));
  st.lost.push_back(error_text(self->system(), lost.reason));
  auto& r = st.report;
  ++r.nodes_lost;
  r.failure_detection_seconds = std::max(r.failure_detection_seconds, lost.silent_seconds);
  remap_without(st, node);
  send_average_trees(self, setup.submission);
  if (st.nodes.empty()) {
    fail_job(self, setup,
             make_error(strom_error::node_lost,
                        fmt::format("every node of the job was lost{}: {}", moment,
                                    fmt::join(st.lost, ", "))));
    return false;
  }
  log::warning("job_master: job {} goes on with {} nodes after losing {}{} ({:.2f} s after its "
               "last sign of life; topology version {}): {}",
               st.status.job_id, st.nodes.size(), described, moment, lost.silent_seconds,
               st.plan.version, error_text(self->system(), lost.reason));
  report_status(self, setup);
  for (auto id : st.nodes)
    self->send(st.members.at(id).agent, forget_atom_v, st.status.job_id, node);
  return true;
}

} // namespace

/// A node of the running job left the cluster: the job goes on without it (see the header).
void lose_member(self_ptr self, const job_master_setup& setup, const member_lost& lost) {
  auto& st = self->state;
  const auto node = lost.node_id;
  const auto before = st.plan;
  if (!drop_member(self, setup, lost, ""))
    return;
  if (st.finishing)
    return complete_when_counted(self, setup);
  if (st.evaluator == node)  // its answer will never come: the next live node evaluates
    evaluate(self, setup);
  // A node that reported the round before it was lost completed it; its totals counted.
  const bool reported = st.epoch_reports.count(node) > 0;
  ++st.forgetting;
  const auto relay = st.prepared.at(node).relay;
  const auto counted = [self, setup, node, reported](const origin_frames& passed) {
    auto& st = self->state;
    --st.forgetting;
    if (!reported)
      take_over_share(self, node, passed);
    end_round_when_done(self, setup);
  };
  const auto failed = [self, setup](const caf::error& why) {
    --self->state.forgetting;
    fail_job(self, setup, why);
  };
  if (st.plan.kind == topology_kind::mesh)
    return repair_mesh(self, setup.timeouts, node, relay, before, counted, failed);
  self->request(st.hub, setup.timeouts.answer_timeout, forget_atom_v, node, relay)
    .then(counted, [self, failed](caf::error& err) {
      failed(make_error(code_for(err, strom_error::node_failed),
                        "the hub relay did not count a lost node's frames: "
                          + error_text(self->system(), err)));
    });
}

void lose_while_preparing(self_ptr self, const job_master_setup& setup, const member_lost& lost) {
  auto& st = self->state;
  const auto node = lost.node_id;
  const auto prepared = st.prepared.find(node);
  if (prepared != st.prepared.end()) {
    // Its relay was the hub's peer: no frame of it was counted, and the count is not awaited.
    if (st.plan.kind == topology_kind::plain)
      caf::anon_send(st.hub, forget_atom_v, node, prepared->second.relay);
    st.prepared.erase(prepared);
  }
  if (drop_member(self, setup, lost, " while the job was preparing"))
    start_when_prepared(self, setup);
}

/// Live nodes the job needs to train (--min-nodes; at least one).
std::size_t min_nodes(const job_master_setup& setup) {
  return std::max<std::size_t>(setup.submission.min_nodes, 1);
}

/// Nodes the job may grow to (--max-nodes; by default --nodes when given, else no bound).
std::size_t max_nodes(const job_master_setup& setup) {
  const auto& job = setup.submission;
  if (job.max_nodes > 0)
    return job.max_nodes;
  return job.nodes > 0 ? job.nodes : std::numeric_limits<std::size_t>::max();
}

/// How long this job waits for nodes when it pauses.
caf::timespan rejoin_timeout(const job_master_setup& setup) {
  return rejoin_timeout_of(setup.submission, setup.timeouts);
}

std::size_t ready_joiners(const job_master_state& st) {
  return static_cast<std::size_t>(std::count_if(st.joining.begin(), st.joining.end(),
                                                [](const auto& j) { return j.second.ready; }));
}

/// Whether joiners take their snapshot while they still prepare (beside loading their data):
/// not in a mesh, where a joiner is wired to its parent first, which needs its relay.
bool restores_beside_loading(const job_master_state& st) {
  return st.plan.kind != topology_kind::mesh;
}

/// Joiners that can take a snapshot now: prepared ones, and any beside its loading.
std::vector<std::uint64_t> restorable_joiners(const job_master_state& st) {
  std::vector<std::uint64_t> out;
  for (const auto& [id, joiner] : st.joining)
    if (joiner.ready || restores_beside_loading(st))
      out.push_back(id);
  return out;
}

/// Has every node end the running round early (a joiner is to be restored), once.
void cut_round(self_ptr self) {
  auto& st = self->state;
  if (!st.round_running || st.cut || st.restoring > 0)
    return;
  st.cut = true;
  for (auto id : st.nodes)
    self->send(st.members.at(id).agent, cut_atom_v, st.status.job_id, st.round);
}

/// A joiner restored: it trains from the next round on.
void bring_in(self_ptr self, const job_master_setup& setup, std::uint64_t node) {
  auto& st = self->state;
  auto& joiner = st.joining.at(node);
  auto& r = st.report;
  const bool replaces = r.nodes_lost > r.nodes_restored;
  ++(replaces ? r.nodes_restored : r.nodes_joined);
  const double took = seconds_between(joiner.joined, self->clock().now());
  r.restore_seconds = std::max(r.restore_seconds, took);
  st.nodes.push_back(node);
  if (st.plan.kind == topology_kind::plain)
    self->send(st.hub, add_peer_atom_v, st.prepared.at(node).relay);
  if (st.plan.links.count(node) == 0)  // a mesh joiner hangs in the plan already
    if (auto grown = with_node(st.plan, node))
      st.plan = std::move(*grown);
  r.topology.version = st.plan.version;
  r.topology.max_links =
    std::max(r.topology.max_links, summary_of(st.plan, st.nodes.size()).max_links);
  st.status.topology = status_line_of(st.plan);
  log::info("job_master: job {} {} {} {:.2f} s after it joined; {} nodes train from round {}",
            st.status.job_id, replaces ? "restored" : "grew by", describe(joiner.node.status),
            took, st.nodes.size(), st.round);
  st.joining.erase(node);
  report_status(self, setup);
}

/// `receivers` (ready joiners) take a live node's snapshot; then the round starts with them.
/// Those whose source was lost meanwhile take the next live node's.
void take_snapshots(self_ptr self, const job_master_setup& setup, bool makeup,
                    std::vector<std::uint64_t> receivers) {
  auto& st = self->state;
  const auto source_node = st.nodes.front();
  const auto source = caf::actor_cast<caf::actor>(st.members.at(source_node).agent);
  // A joiner let go while it was wired takes none.
  receivers.erase(std::remove_if(receivers.begin(), receivers.end(),
                                 [&](std::uint64_t node) { return !st.joining.count(node); }),
                  receivers.end());
  if (receivers.empty()) {
    st.restoring = 0;
    return start_round(self, makeup);
  }
  auto failed = std::make_shared<std::set<std::uint64_t>>();
  auto again = std::make_shared<std::vector<std::uint64_t>>();
  auto done = [self, setup, makeup, failed, again, receivers] {
    auto& st = self->state;
    if (--st.restoring > 0 || st.outcome)
      return;
    for (auto node : receivers) {
      if (failed->count(node) > 0)
        drop_joiner(self, setup, node, "it could not take a snapshot");
      else if (st.joining.count(node) > 0
               && std::find(again->begin(), again->end(), node) == again->end())
        bring_in(self, setup, node);  // restored, and not lost meanwhile
    }
    if (!again->empty() && !st.nodes.empty()) {
      st.restoring = static_cast<std::uint32_t>(again->size());
      return take_snapshots(self, setup, makeup, *again);
    }
    start_round(self, makeup);
  };
  st.restoring = static_cast<std::uint32_t>(receivers.size());
  log::debug("job_master: job {}: {} joiners take node {}'s snapshot", st.status.job_id,
             receivers.size(), source_node);
  for (auto node : receivers) {
    // One still preparing answers once it prepared and took the snapshot.
    const auto timeout = st.joining.at(node).ready
                           ? setup.timeouts.restore_timeout
                           : setup.timeouts.prepare_timeout + setup.timeouts.restore_timeout;
    request_while_alive(self, st.awaiting, node, st.members.at(node).agent, timeout,
                        restore_atom_v, st.status.job_id, source)
      .then([done](const snapshot_sent&) { done(); },
            [self, done, failed, again, node, source_node](caf::error& err) {
              const bool source_lost = !in_job(self->state, source_node);
              log::warning("job_master: node {} took no snapshot{}: {}", node,
                           source_lost ? " (its source was lost; it takes another)" : "",
                           error_text(self->system(), err));
              if (source_lost)
                again->push_back(node);
              else
                failed->insert(node);
              done();
            });
  }
}

/// Mesh: each joiner hangs under the node nearest the root with room and is wired to it
/// before its snapshot, so the next round's frames reach it (nothing trains meanwhile, so
/// nothing is resent); one that cannot be wired is let go.
void wire_joiners(self_ptr self, const job_master_setup& setup,
                  const std::vector<std::uint64_t>& joiners, std::function<void()> then) {
  auto& st = self->state;
  for (auto node : joiners)
    if (auto grown = with_node(st.plan, node))
      st.plan = std::move(*grown);
  st.report.topology.version = st.plan.version;
  send_average_trees(self, setup.submission);
  wire_children(self, setup.timeouts.prepare_timeout, joiners, false, then,
                [self, setup, joiners, then](const caf::error& why) {
                  for (auto node : joiners)
                    drop_joiner(self, setup, node,
                                "it could not join the mesh: " + error_text(self->system(), why));
                  then();
                });
}

/// Every restorable joiner takes a live node's snapshot (its first trainer's), in a mesh once
/// it is prepared and wired; then the round starts with them. Nothing trains meanwhile, so no
/// frame is newer than the snapshot.
void restore_joiners(self_ptr self, const job_master_setup& setup, bool makeup) {
  auto& st = self->state;
  const auto receivers = restorable_joiners(st);
  st.restoring = static_cast<std::uint32_t>(receivers.size());
  if (restores_beside_loading(st))  // no wiring first
    return take_snapshots(self, setup, makeup, std::move(receivers));
  wire_joiners(self, setup, receivers, [self, setup, makeup, receivers] {
    if (!self->state.outcome)
      take_snapshots(self, setup, makeup, receivers);
  });
}

/// Pauses the job between rounds until enough nodes joined, failing it after the rejoin
/// timeout.
void pause(self_ptr self, const job_master_setup& setup, bool makeup) {
  auto& st = self->state;
  st.paused = makeup;
  log::warning("job_master: job {} pauses with {} of the {} nodes it needs; it fails unless "
               "enough join within {:.0f} s",
               st.status.job_id, st.nodes.size(), min_nodes(setup),
               seconds_of(rejoin_timeout(setup)));
  self->delayed_send(self, rejoin_timeout(setup), rejoin_atom_v, st.status.job_id,
                     st.round);
}

/// Starts the next round: paused below the minimum of nodes, after the ready joiners took a
/// snapshot when there are any.
void next_round(self_ptr self, const job_master_setup& setup, bool makeup) {
  auto& st = self->state;
  if (st.nodes.size() + ready_joiners(st) < min_nodes(setup))
    return pause(self, setup, makeup);
  if (!restorable_joiners(st).empty())
    return restore_joiners(self, setup, makeup);
  start_round(self, makeup);
}

/// A joiner's actors run: a running round is cut short so it trains soon, and a paused job
/// may go on.
void joiner_ready(self_ptr self, const job_master_setup& setup, const node_ready& ready) {
  auto& st = self->state;
  st.prepared[ready.node_id] = ready;
  auto& joiner = st.joining.at(ready.node_id);
  joiner.ready = true;
  log::debug("job_master: job {} joiner node {} prepared {:.2f} s after it joined",
             st.status.job_id, ready.node_id, seconds_between(joiner.joined, self->clock().now()));
  if (st.round_running) {
    cut_round(self);
  } else if (st.paused && st.restoring == 0) {
    const bool makeup = *st.paused;
    st.paused.reset();
    next_round(self, setup, makeup);
  }
}

/// Assigns the job to a node that joined: it loads the data and builds its actors meanwhile.
bool take_joiner(self_ptr self, const job_master_setup& setup, const member_joined& joined) {
  auto& st = self->state;
  const auto node = joined.node.node_id;
  if (st.outcome || st.finishing || st.status.state != "training" || st.pipeline
      || st.nodes.size() + st.joining.size() >= max_nodes(setup) || st.members.count(node) > 0)
    return false;
  const job_node joiner{joined.node, caf::actor_cast<job_agent_actor>(joined.agent)};
  st.members[node] = joiner;
  st.joining[node] = job_joiner{joiner, self->clock().now(), false};
  // Rounds assign the data: its worker ranks here only pass the node's own checks.
  auto a = assignment_for(st, setup, static_cast<std::uint32_t>(st.nodes.size()),
                          joined.node.workers, 0, joined.node.workers);
  a.origins.push_back(node);
  const auto job_id = st.status.job_id;
  request_while_alive(self, st.awaiting, node, joiner.agent, setup.timeouts.prepare_timeout,
                      std::move(a))
    .then(
      [self, setup, job_id, node](const node_ready& ready) {
        if (!self->state.outcome && self->state.joining.count(node) > 0)
          joiner_ready(self, setup, ready);
      },
      [self, setup, node](caf::error& err) {
        drop_joiner(self, setup, node,
                    "it did not prepare the job: " + error_text(self->system(), err));
      });
  log::info("job_master: job {} takes {}, which joined (membership epoch {})", job_id,
            describe(joined.node), joined.membership_epoch);
  // Its snapshot is taken beside its data loading: the round ends now, not once it prepared.
  if (restores_beside_loading(st))
    cut_round(self);
  return true;
}

} // namespace strom::actors::job_steps
