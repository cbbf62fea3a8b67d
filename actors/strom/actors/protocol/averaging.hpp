#pragma once
// Parameter averaging along the tree (average_reduction.hpp): trainers' nodes and relays send
// segments of sums up the tree and the root's totals down again; the job_master tells each
// relay the tree to reduce along.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "strom/actors/protocol/sharing.hpp"

namespace strom::actors {

/// Elements of a contribution [weight, parameters, updater state] one sum or total carries at
/// most (1 MiB): a whole model goes as segments, which the tree reduces one by one, so that the
/// transfers of one overlap the adding of another.
inline constexpr std::size_t average_segment_elements = std::size_t{1} << 18;

/// A segment of a sum of contributions to one parameter average on its way up the tree: a
/// trainer's node's sum (published to its relay) or a relay's partial sum of its subtree (sent
/// to its parent). `sum` is a dense fp32 frame whose header names the node that summed it
/// (origin_node), the round (epoch), the average (sequence) and the segment's first element of
/// the contribution (offset).
struct average_part {
  std::uint32_t round = 0;
  std::uint64_t index = 0;    ///< the round's index-th average
  std::uint64_t attempt = 0;  ///< the tree version it was summed along (0: a node's own sum)
  std::vector<std::uint64_t> members;  ///< the round's nodes (round_work::origins)
  shared_frame sum;
};

template <class F>
typename F::result_type inspect(F& f, average_part& x) {
  return f(caf::meta::type_name("average_part"), x.round, x.index, x.attempt, x.members, x.sum);
}

/// A segment of the complete sum of one average (the root's), flooded to every node and its
/// trainers.
struct average_total {
  std::uint32_t round = 0;
  std::uint64_t index = 0;
  shared_frame sum;
};

template <class F>
typename F::result_type inspect(F& f, average_total& x) {
  return f(caf::meta::type_name("average_total"), x.round, x.index, x.sum);
}

/// job_master -> relay: the tree averages are reduced along, as the relay of `node` sees it.
/// Each version replaces the one before; the averages open then start again along it.
struct average_tree {
  std::uint64_t version = 0;
  std::uint64_t node = 0;  ///< the receiving relay's node
  std::uint64_t root = 0;
  std::vector<std::uint64_t> nodes;    ///< every node of the tree
  std::vector<std::uint64_t> parents;  ///< of nodes[i]; 0 for the root
};

template <class F>
typename F::result_type inspect(F& f, average_tree& x) {
  return f(caf::meta::type_name("average_tree"), x.version, x.node, x.root, x.nodes, x.parents);
}

} // namespace strom::actors
