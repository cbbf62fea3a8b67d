#include "strom/actors/sharing/topology.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <set>

#include <fmt/format.h>

namespace strom::actors {

namespace {

/// `node` and every node below it.
std::set<std::uint64_t> subtree_of(const topology_plan& plan, std::uint64_t node) {
  std::set<std::uint64_t> found{node};
  std::deque<std::uint64_t> open{node};
  while (!open.empty()) {
    const auto next = open.front();
    open.pop_front();
    for (auto child : plan.links.at(next).children)
      if (found.insert(child).second)
        open.push_back(child);
  }
  return found;
}

/// Hops from the root to `node`.
std::size_t depth_of(const topology_plan& plan, std::uint64_t node) {
  std::size_t depth = 0;
  for (auto at = node; at != plan.root; at = plan.links.at(at).parent)
    ++depth;
  return depth;
}

bool has_room(const topology_plan& plan, const topology_links& links) {
  return plan.kind == topology_kind::plain || links.children.size() < plan.fanout;
}

void attach(topology_plan& plan, std::uint64_t child, std::uint64_t parent) {
  plan.links[child].parent = parent;
  plan.links.at(parent).children.push_back(child);
}

} // namespace

std::string to_string(topology_kind kind) {
  switch (kind) {
    case topology_kind::plain: return "plain";
    case topology_kind::mesh: return "mesh";
    case topology_kind::automatic: return "auto";
  }
  return "unknown";
}

result<topology_kind> parse_topology_kind(std::string_view text) {
  for (auto kind : {topology_kind::plain, topology_kind::mesh, topology_kind::automatic})
    if (text == to_string(kind))
      return kind;
  return error{fmt::format("topology '{}' is not plain, mesh or auto", text)};
}

result<topology_plan> plan_topology(const std::vector<std::uint64_t>& nodes,
                                    const topology_options& options) {
  if (nodes.empty())
    return error{"topology: no nodes to plan for"};
  if (options.fanout == 0)
    return error{"topology: fanout 0; a mesh node needs room for at least one child"};
  if (std::set<std::uint64_t>(nodes.begin(), nodes.end()).size() != nodes.size())
    return error{"topology: a node id appears twice in the membership"};
  if (std::find(nodes.begin(), nodes.end(), 0) != nodes.end())
    return error{"topology: node id 0 is reserved for 'no parent'"};
  topology_plan plan;
  plan.kind = options.kind;
  if (options.kind == topology_kind::automatic)
    plan.kind = nodes.size() < mesh_threshold ? topology_kind::plain : topology_kind::mesh;
  plan.fanout = options.fanout;
  plan.version = 1;
  plan.root = nodes.front();
  plan.links[plan.root] = {};
  // Breadth first: in membership order, node i hangs under node (i - 1) / fanout, so every
  // level is full before the next one starts.
  for (std::size_t i = 1; i < nodes.size(); ++i)
    attach(plan, nodes[i], plan.kind == topology_kind::plain ? plan.root
                                                             : nodes[(i - 1) / plan.fanout]);
  return plan;
}

result<topology_plan> without_node(topology_plan plan, std::uint64_t node) {
  const auto lost = plan.links.find(node);
  if (lost == plan.links.end())
    return error{fmt::format("topology: node {} is not in plan version {}", node, plan.version)};
  auto orphans = lost->second.children;
  auto excluded = subtree_of(plan, node);
  if (node == plan.root) {
    if (orphans.empty())
      return error{fmt::format("topology: node {} is the root and the plan's last node", node)};
    // The root's first child takes its place (it keeps its own subtree); its siblings are
    // re-attached like any orphans, inside the new root's subtree.
    plan.root = orphans.front();
    plan.links.at(plan.root).parent = 0;
    orphans.erase(orphans.begin());
    for (auto kept : subtree_of(plan, plan.root))
      excluded.erase(kept);
  } else {
    auto& siblings = plan.links.at(lost->second.parent).children;
    siblings.erase(std::find(siblings.begin(), siblings.end(), node));
  }
  for (auto orphan : orphans) {
    // The fewest children first, then the lowest id (std::map iterates ids in order).
    std::uint64_t adopter = 0;
    std::size_t fewest = std::numeric_limits<std::size_t>::max();
    for (const auto& [id, links] : plan.links)
      if (!excluded.count(id) && has_room(plan, links) && links.children.size() < fewest) {
        adopter = id;
        fewest = links.children.size();
      }
    // A parent that lost a child has room, and a new root's subtree has a leaf: an adopter
    // always exists.
    attach(plan, orphan, adopter);
  }
  plan.links.erase(node);
  ++plan.version;
  return plan;
}

result<topology_plan> with_node(topology_plan plan, std::uint64_t node) {
  if (node == 0 || plan.links.count(node))
    return error{fmt::format("topology: node {} is 0 or already in plan version {}", node,
                             plan.version)};
  std::uint64_t parent = plan.root;
  std::size_t nearest = std::numeric_limits<std::size_t>::max();
  if (plan.kind == topology_kind::mesh)
    for (const auto& [id, links] : plan.links)
      if (has_room(plan, links) && depth_of(plan, id) < nearest) {
        parent = id;
        nearest = depth_of(plan, id);
      }
  attach(plan, node, parent);
  ++plan.version;
  return plan;
}

std::size_t max_links(const topology_plan& plan) {
  std::size_t most = 0;
  for (const auto& [id, links] : plan.links)
    most = std::max(most, links.children.size() + (links.parent != 0 ? 1 : 0));
  return most;
}

} // namespace strom::actors
