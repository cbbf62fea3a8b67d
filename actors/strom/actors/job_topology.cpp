#include "strom/actors/job_topology.hpp"

#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"

namespace strom::actors {

topology_plan plan_for(const job_submission& submission, const std::vector<std::uint64_t>& nodes) {
  const auto kind = parse_topology_kind(submission.topology);
  const topology_options options{kind ? *kind : topology_kind::plain,
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

void wire_mesh(caf::stateful_actor<job_master_state>* self, caf::timespan timeout,
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
  std::vector<topology_update> updates;
  for (const auto& [node, links] : st.plan.links) {
    if (links.parent == 0)
      continue;
    const auto& parent_endpoint = st.prepared.at(links.parent).relay_endpoint;
    if (parent_endpoint.empty())
      return fail_once(make_error(
        strom_error::bad_job,
        fmt::format("node {} published no relay port (its log says why), so its mesh "
                    "children cannot reach it",
                    links.parent)));
    updates.push_back({st.status.job_id, st.plan.version, links.parent, parent_endpoint});
  }
  edges->open = updates.size();
  std::size_t next = 0;
  for (const auto& [node, links] : st.plan.links) {
    if (links.parent == 0)
      continue;
    const auto child = node;
    const auto update = updates[next++];
    self->request(st.members.at(child).agent, timeout, update)
      .then(
        [self, edges, wired](wired_atom) {
          if (edges->ended || self->state.outcome || --edges->open > 0)
            return;
          edges->ended = true;
          wired();
        },
        [self, fail_once, child, update](caf::error& err) {
          fail_once(make_error(
            err == caf::sec::request_timeout ? strom_error::timeout : strom_error::node_failed,
            fmt::format("node {} could not connect its relay to its mesh parent, node {} at "
                        "{}: {}",
                        child, update.parent, update.parent_endpoint,
                        error_text(self->system(), err))));
        });
  }
  if (updates.empty() && !edges->ended) {
    edges->ended = true;
    wired();
  }
}

caf::error mesh_loss_error(const std::string& lost) {
  return make_error(strom_error::node_lost,
                    fmt::format("lost {}: a mesh job cannot yet survive a lost node (its relay "
                                "tree is not re-wired); run it with --topology plain to have it "
                                "go on without the node",
                                lost));
}

} // namespace strom::actors
