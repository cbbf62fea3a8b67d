#pragma once
// Topology: which node sends its update frames to which, as a pure function of membership (no
// CAF, no clock), so the job_master can remap it on a loss and tests can check it exhaustively.
//   plain: every node sends to the root, whose relay passes frames on to all others.
//   mesh:  Deeplearning4j's MeshOrganizer: a tree under the root with at most `fanout` children
//          a node, filled breadth first; a lost node's children are re-attached each to the
//          online node with the fewest children (ties: lowest id) that has room and is not in
//          the lost subtree; a lost root's first child takes its place.
//   auto:  plain below mesh_threshold nodes, mesh from there (Deeplearning4j's advice: one hub
//          carries a small cluster; past that its links are the bottleneck).
// Every change bumps the plan's version, so nodes can tell a newer plan from an older one.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::actors {

enum class topology_kind { plain, mesh, automatic };

/// Children per node in a mesh unless told otherwise (Deeplearning4j MeshOrganizer's default).
inline constexpr std::uint32_t default_fanout = 8;

/// Most children a mesh node may have: past a thousand links one relay is a hub again, so a
/// larger fanout is a typo (job files and flags are checked against it).
inline constexpr std::uint32_t max_fanout = 1024;

/// Nodes from which `automatic` chooses mesh (Deeplearning4j: plain is fine below 32 nodes).
inline constexpr std::size_t mesh_threshold = 32;

struct topology_options {
  topology_kind kind = topology_kind::plain;
  std::uint32_t fanout = default_fanout;  ///< mesh only; at least 1
};

/// One node's neighbours in the plan.
struct topology_links {
  std::uint64_t parent = 0;              ///< 0 for the root (node ids start at 1)
  std::vector<std::uint64_t> children;   ///< in the order they were attached
};

/// Who sends to whom, and which version of the plan this is.
struct topology_plan {
  topology_kind kind = topology_kind::plain;  ///< plain or mesh (automatic is resolved)
  std::uint32_t fanout = default_fanout;
  std::uint64_t version = 0;                  ///< 1 for a new plan, +1 per change
  std::uint64_t root = 0;
  std::map<std::uint64_t, topology_links> links;  ///< every node of the plan, by id
};

/// "plain", "mesh" or "auto".
std::string to_string(topology_kind kind);

/// The kind named "plain", "mesh" or "auto"; the error quotes the text.
result<topology_kind> parse_topology_kind(std::string_view text);

/// The plan for `nodes` (distinct ids, none 0), whose first is the root; version 1.
result<topology_plan> plan_topology(const std::vector<std::uint64_t>& nodes,
                                    const topology_options& options);

/// `plan` without `node` (lost or left): its children are re-attached (mesh) or nothing else
/// changes (plain). A lost root's first child becomes the root and its other children are
/// re-attached below it; the plan's last node cannot be removed.
result<topology_plan> without_node(topology_plan plan, std::uint64_t node);

/// `plan` with `node` joined: under the root (plain), or under the node nearest the root that
/// has room (mesh; ties: lowest id).
result<topology_plan> with_node(topology_plan plan, std::uint64_t node);

/// The most neighbours any node sends to (its children and its parent).
std::size_t max_links(const topology_plan& plan);

} // namespace strom::actors
