#include "strom/actors/sharing/job_topology.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/log.hpp"

namespace strom::actors {

topology_plan plan_for(const job_submission& submission, const std::vector<std::uint64_t>& nodes) {
  const auto named = parse_topology_kind(submission.topology);
  const auto kind = submission.averaging ? topology_kind::mesh
                    : named              ? *named
                                         : topology_kind::plain;
  const topology_options options{kind,
                                 submission.fanout > 0 ? submission.fanout : default_fanout};
  // A job's nodes are distinct members, so planning cannot fail here.
  auto plan = plan_topology(nodes, options);
  return plan ? std::move(*plan) : topology_plan{};
}

topology_summary summary_of(const topology_plan& plan, std::size_t nodes) {
  const auto links = plan.kind == topology_kind::mesh ? max_links(plan) : nodes;
  return {to_string(plan.kind), plan.fanout, plan.version, static_cast<std::uint32_t>(links)};
}

std::string status_line_of(const topology_plan& plan) {
  if (plan.kind != topology_kind::mesh)
    return {};
  std::vector<std::string> parents;
  for (const auto& [node, links] : plan.links)
    if (!links.children.empty())
      parents.push_back(fmt::format("{} > {}", node, fmt::join(links.children, " ")));
  return fmt::format("mesh, fanout {}: {}", plan.fanout, fmt::join(parents, "; "));
}

bool needs_wiring(const topology_plan& plan) {
  return plan.kind == topology_kind::mesh && plan.links.size() > 1;
}

void send_average_trees(caf::stateful_actor<job_master_state>* self,
                        const job_submission& submission) {
  const auto& st = self->state;
  if (!submission.averaging)
    return;
  average_tree tree{st.plan.version, 0, st.plan.root, {}, {}};
  for (const auto& [node, links] : st.plan.links) {
    tree.nodes.push_back(node);
    tree.parents.push_back(links.parent);
  }
  for (const auto& [node, links] : st.plan.links)
    if (const auto prepared = st.prepared.find(node);
        prepared != st.prepared.end() && prepared->second.relay) {
      tree.node = node;
      self->send(prepared->second.relay, tree);
    }
}

void wire_children(caf::stateful_actor<job_master_state>* self, caf::timespan timeout,
                   const std::vector<std::uint64_t>& children, bool resend,
                   std::function<void()> wired, std::function<void(const caf::error&)> failed) {
  auto& st = self->state;
  // Shared by the answers: how many edges are still open, and whether one failed already.
  struct progress {
    std::size_t open = 0;
    bool ended = false;
  };
  auto edges = std::make_shared<progress>();
  const auto fail_once = [self, edges, failed](const caf::error& why) {
    if (edges->ended || self->state.outcome)
      return;
    edges->ended = true;
    failed(why);
  };
  const auto wired_one = [self, edges, wired] {
    if (edges->ended || self->state.outcome || --edges->open > 0)
      return;
    edges->ended = true;
    wired();
  };
  std::vector<topology_update> updates;
  for (auto child : children) {
    const auto parent = st.plan.links.at(child).parent;
    const auto& parent_endpoint = st.prepared.at(parent).relay_endpoint;
    if (parent_endpoint.empty())
      return fail_once(make_error(
        strom_error::bad_job,
        fmt::format("node {} published no relay port (its log says why), so its mesh "
                    "children cannot reach it",
                    parent)));
    updates.push_back({st.status.job_id, st.plan.version, parent, parent_endpoint, resend});
  }
  edges->open = updates.size();
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const auto child = children[i];
    const auto update = updates[i];
    request_while_alive(self, st.awaiting, child, st.members.at(child).agent, timeout, update)
      .then([wired_one](wired_atom) { wired_one(); },
            [self, fail_once, wired_one, child, update](caf::error& err) {
              // A node lost meanwhile: the repair after its loss re-attaches what hung on it.
              if (!self->state.members.count(child) || !self->state.members.count(update.parent))
                return wired_one();
              fail_once(make_error(
                err == caf::sec::request_timeout ? strom_error::timeout : strom_error::node_failed,
                fmt::format("node {} could not connect its relay to its mesh parent, node {} at "
                            "{} (topology version {}): {}",
                            child, update.parent, update.parent_endpoint, update.version,
                            error_text(self->system(), err))));
            });
  }
  if (updates.empty() && !edges->ended) {
    edges->ended = true;
    wired();
  }
}

void wire_mesh(caf::stateful_actor<job_master_state>* self, caf::timespan timeout,
               std::function<void()> wired, std::function<void(const caf::error&)> failed) {
  std::vector<std::uint64_t> children;
  for (const auto& [node, links] : self->state.plan.links)
    if (links.parent != 0)
      children.push_back(node);
  wire_children(self, timeout, children, false, std::move(wired), std::move(failed));
}

std::vector<std::uint64_t> reattached(const topology_plan& before, const topology_plan& after) {
  std::vector<std::uint64_t> moved;
  for (const auto& [node, links] : after.links)
    if (links.parent != 0 && before.links.count(node) > 0
        && before.links.at(node).parent != links.parent)
      moved.push_back(node);
  return moved;
}

origin_frames union_of(std::uint64_t origin, const std::vector<origin_frames>& counts) {
  origin_frames all;
  all.origin = origin;
  for (const auto& count : counts)
    all.round = std::max(all.round, count.round);
  for (const auto& count : counts) {
    if (count.round != all.round)
      continue;
    if (all.frames.size() < count.frames.size())
      all.frames.resize(count.frames.size());
    for (std::size_t worker = 0; worker < count.frames.size(); ++worker)
      all.frames[worker] = std::max(all.frames[worker], count.frames[worker]);
    all.drained |= count.drained;
  }
  return all;
}

void repair_mesh(caf::stateful_actor<job_master_state>* self, const timing& timeouts,
                 std::uint64_t lost, const caf::actor& lost_relay, const topology_plan& before,
                 std::function<void(const origin_frames&)> repaired,
                 std::function<void(const caf::error&)> failed) {
  auto& st = self->state;
  const auto started = self->clock().now();
  struct progress {
    std::size_t open = 0;
    bool failed = false;
    std::vector<origin_frames> counts;
  };
  auto answers = std::make_shared<progress>();
  answers->open = st.nodes.size();
  // Once every survivor forgot the lost relay (its count is final), the new edges carry
  // what each side kept of the round.
  const auto rewire = [self, timeouts, lost, answers, before, started, repaired, failed] {
    auto& st = self->state;
    const auto counted = union_of(lost, answers->counts);
    const auto children = reattached(before, st.plan);
    wire_children(
      self, timeouts.prepare_timeout, children, true,
      [self, lost, counted, children, started, repaired] {
        log::info("job_master: job {} re-wired its mesh without node {} in {:.3f} s (topology "
                  "version {}; re-attached: {})",
                  self->state.status.job_id, lost,
                  std::chrono::duration<double>(self->clock().now() - started).count(),
                  self->state.plan.version, fmt::join(children, " "));
        repaired(counted);
      },
      failed);
  };
  const auto answered = [answers, rewire] {
    if (--answers->open == 0 && !answers->failed)
      rewire();
  };
  for (auto survivor : st.nodes)
    request_while_alive(self, st.awaiting, survivor, st.prepared.at(survivor).relay,
                        timeouts.answer_timeout, forget_atom_v, lost, lost_relay)
      .then(
        [answers, answered](const origin_frames& counted) {
          answers->counts.push_back(counted);
          answered();
        },
        [self, answers, answered, survivor, lost, failed](caf::error& err) {
          // A survivor lost meanwhile counts nothing: its own loss repairs the mesh again.
          if (!self->state.members.count(survivor))
            return answered();
          if (answers->failed)
            return;
          answers->failed = true;
          failed(make_error(err == caf::sec::request_timeout ? strom_error::timeout
                                                             : strom_error::node_failed,
                            fmt::format("node {}'s relay did not count lost node {}'s frames: {}",
                                        survivor, lost, error_text(self->system(), err))));
        });
}

} // namespace strom::actors
