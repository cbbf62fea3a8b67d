#pragma once
// Parameter averaging as a reduction along a tree of the job's nodes (one relay's share; no
// CAF here, so tests drive it directly). Each node's relay waits, for each average, for its
// own node's sum (node_average.hpp) and the partial sums of those children whose subtree holds
// a member of the round, adds them (its own first, then its children's by node id, so every
// run sums in the same order) and sends the result to its parent. The root's sum is the total:
// it goes to the root's trainers and down the tree, each relay passing it to its trainers and
// children. A node receives (children + 1) sums an average instead of every other node's.
//
// Faults. The job_master sends every relay each new version of the tree (a node lost or
// joined). The averages still open then start again along it: each relay drops its children's
// partial sums and waits for their sums of the new version (partial sums carry the version
// they were summed along, `attempt`; an older one is dropped, a newer one kept until the relay
// has that version too), so every node's sum is in a total once, and a lost node's sum in none
// that was not complete before it was lost. A completed segment is never summed again: a relay
// that has its total answers a child's partial sum of it with the total, and sends the totals of
// the last two averages it took to every new neighbour (a re-attached child may have missed one,
// a new root may not have had it). Each total passes once; one of an average older than those
// two is dropped (every live member took it: the newer ones needed its sums).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "strom/actors/messages.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors {

/// What the relay is to send after the reduction took a message.
struct reduction_sends {
  std::vector<average_part> up;     ///< to the parent's relay
  std::vector<average_total> out;   ///< to the node's trainers and every neighbour but the sender
  std::vector<average_total> back;  ///< to the neighbour the message came from only
};

/// One relay's part in reducing the averages along the tree.
class average_reduction {
public:
  /// Takes a newer version of the tree (an older one is ignored); open averages start again.
  reduction_sends set_tree(const average_tree& tree);

  /// Whether the relay is linked to its parent now. A new link gets every complete partial
  /// sum (those sent along a lost link are gone).
  reduction_sends set_parent_linked(bool linked);

  /// This node's sum of an average (attempt 0; its header's origin is this node).
  result<reduction_sends> own(const average_part& part);

  /// A child's partial sum. Refuses one whose sum is no contribution or does not fit the
  /// average's others, or that comes from a node not a child here in its version; drops one of
  /// an older version or round, and answers one of an average already complete with its total.
  result<reduction_sends> from_child(const average_part& part);

  /// A total from a neighbour: a newer one is taken and passed on, an older one dropped.
  result<reduction_sends> total(const average_total& total);

  /// The totals of the last two averages taken (oldest first), for a new neighbour.
  const std::deque<average_total>& kept() const { return kept_; }

  /// The tree's version (0: none yet).
  std::uint64_t version() const { return tree_.version; }

private:
  using average_id = std::pair<std::uint32_t, std::uint64_t>;  // round, index
  struct key {
    average_id average;
    std::uint64_t offset = 0;  // the segment's first element
    friend auto operator<=>(const key&, const key&) = default;
  };
  struct open_segment {
    std::vector<std::uint64_t> members;
    std::optional<shared_frame> own;
    std::map<std::uint64_t, shared_frame> children;  // of the tree's version, by node id
    std::size_t elements = 0;  // of the first sum that came
    bool sent = false;         // along the current parent link
  };
  struct read_part {
    key which;
    std::uint64_t origin = 0;
    std::size_t elements = 0;
  };

  // Reads and checks a sum of average `average`: a dense fp32 frame of `elements` (0: any)
  // finite values.
  result<read_part> read_sum(const average_id& average, const shared_frame& sum,
                             std::size_t elements);
  // Reads a sum or total of average (round, index) that is still of use: nothing for one of a
  // round that is over or of a segment closed.
  result<std::optional<read_part>> read_open(std::uint32_t round, std::uint64_t index,
                                             const shared_frame& sum);
  // Refuses `whose` sum whose size differs from that of the sums its segment has.
  result<void> same_size(const read_part& read, std::string_view whose) const;
  // Drops what belongs to rounds before `round` (a newer round never waits for them).
  void drop_before(std::uint32_t round);
  // Whether `child`'s subtree holds a member of `members`.
  bool holds_member(std::uint64_t child, const std::vector<std::uint64_t>& members) const;
  // Sends the segment's partial sum up (or, at the root, its total out) once it is complete.
  void complete_if_ready(const key& which, reduction_sends& sends);
  // Takes a total: passes it on (out) and closes its segment.
  void take_total(const key& which, const average_total& total, reduction_sends& sends);
  // Takes a child's part of the tree's current version.
  result<void> add_child(const average_part& part, reduction_sends& sends);
  // Keeps a child's part of a newer tree, at most one a segment of two averages a child.
  result<void> keep_early(const average_part& part);
  bool is_closed(const key& which) const;

  average_tree tree_;
  std::map<std::uint64_t, std::uint64_t> parent_of_;  // of the current tree
  std::map<std::uint64_t, std::vector<std::uint64_t>> children_of_;
  bool parent_linked_ = false;
  std::uint32_t newest_round_ = 0;
  std::map<key, open_segment> open_;
  struct early_part {
    key which;
    std::uint64_t origin = 0;  // the child that sent it
    average_part part;
  };
  std::vector<early_part> early_;  // children's parts of a newer tree
  // Segments closed of the last two averages that closed one; older averages are all closed.
  std::map<average_id, std::set<std::uint64_t>> closed_;
  std::deque<average_total> kept_;  // the totals of those averages
  compute::frame_workspace workspace_;
  std::vector<float> sum_;  // reused: a sum being added up
};

} // namespace strom::actors
