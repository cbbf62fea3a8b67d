#include "strom/actors/averaging/average_reduction.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/codecs/dense_codec.hpp"

namespace strom::actors {

namespace {

/// Averages whose closed segments and totals a relay keeps: no live member can be more than one
/// average behind the newest total (that total needed its sums of the one before).
constexpr std::size_t kept_averages = 2;

bool contains(const std::vector<std::uint64_t>& nodes, std::uint64_t node) {
  return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

} // namespace

reduction_sends average_reduction::set_tree(const average_tree& tree) {
  reduction_sends sends;
  if (tree.version <= tree_.version || tree.nodes.size() != tree.parents.size())
    return sends;
  tree_ = tree;
  parent_of_.clear();
  children_of_.clear();
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    parent_of_[tree.nodes[i]] = tree.parents[i];
    if (tree.parents[i] != 0)
      children_of_[tree.parents[i]].push_back(tree.nodes[i]);
  }
  for (auto& [which, segment] : open_) {
    segment.children.clear();
    segment.sent = false;
  }
  std::vector<early_part> early;
  early.swap(early_);
  for (auto& kept : early) {
    if (kept.part.attempt > tree_.version)
      early_.push_back(std::move(kept));
    else if (kept.part.attempt == tree_.version)
      (void)add_child(kept.part, sends);  // refused ones are dropped: the child sends again
  }
  for (auto it = open_.begin(); it != open_.end();) {
    const auto which = (it++)->first;  // completing may close it
    complete_if_ready(which, sends);
  }
  return sends;
}

reduction_sends average_reduction::set_parent_linked(bool linked) {
  reduction_sends sends;
  parent_linked_ = linked;
  for (auto& [which, segment] : open_)
    segment.sent = false;
  if (linked)
    for (auto it = open_.begin(); it != open_.end();) {
      const auto which = (it++)->first;
      complete_if_ready(which, sends);
    }
  return sends;
}

result<average_reduction::read_part> average_reduction::read_sum(const average_id& average,
                                                                 const shared_frame& sum,
                                                                 std::size_t elements) {
  auto view = compute::read_update_frame(sum.value, workspace_);
  if (!view)
    return view.err();
  const auto& header = view->header;
  if (view->enc != compute::encoding::dense_fp32 || view->elements == 0
      || view->elements > average_segment_elements
      || header.offset % average_segment_elements != 0
      || (elements != 0 && view->elements != elements))
    return error{fmt::format("a sum of node {} to average {} of round {} does not fit: {} "
                             "elements from {} as {}, expected {} dense_fp32 from a multiple "
                             "of {}",
                             header.origin_node, average.second, average.first, view->elements,
                             header.offset, compute::to_string(view->enc),
                             elements != 0 ? fmt::format("{}", elements)
                                           : fmt::format("1 to {}", average_segment_elements),
                             average_segment_elements)};
  // Its values are checked now (finite), so that adding it up later cannot fail.
  if (auto values = compute::validate(view->enc, 0.0f, view->payload, view->elements); !values)
    return error{fmt::format("a sum of node {} to average {} of round {}: {}", header.origin_node,
                             average.second, average.first, values.err().message)};
  return read_part{{average, header.offset}, header.origin_node, view->elements};
}

void average_reduction::drop_before(std::uint32_t round) {
  if (round <= newest_round_)
    return;
  newest_round_ = round;
  open_.erase(open_.begin(), open_.lower_bound(key{{round, 0}, 0}));
  std::erase_if(early_,
                [round](const early_part& early) { return early.which.average.first < round; });
}

bool average_reduction::is_closed(const key& which) const {
  if (closed_.empty() || which.average < closed_.begin()->first)
    return !closed_.empty();
  const auto average = closed_.find(which.average);
  return average != closed_.end() && average->second.count(which.offset) > 0;
}

result<std::optional<average_reduction::read_part>>
average_reduction::read_open(std::uint32_t round, std::uint64_t index, const shared_frame& sum) {
  if (round < newest_round_)
    return std::optional<read_part>{};
  auto read = read_sum({round, index}, sum, 0);
  if (!read)
    return read.err();
  if (is_closed(read->which))
    return std::optional<read_part>{};
  return std::optional<read_part>{*read};
}

result<void> average_reduction::same_size(const read_part& read, std::string_view whose) const {
  const auto open = open_.find(read.which);
  if (open == open_.end() || open->second.elements == 0
      || open->second.elements == read.elements)
    return success();
  return error{fmt::format("{} to average {} of round {} has {} elements at {}, the others {}",
                           whose, read.which.average.second, read.which.average.first,
                           read.elements, read.which.offset, open->second.elements)};
}

result<reduction_sends> average_reduction::own(const average_part& part) {
  reduction_sends sends;
  auto read = read_open(part.round, part.index, part.sum);
  if (!read || !*read)
    return read ? result<reduction_sends>{sends} : read.err();
  if (auto fits = same_size(**read, "this node's sum"); !fits)
    return fits.err();
  const auto which = (*read)->which;
  drop_before(part.round);
  auto& segment = open_[which];
  segment.elements = (*read)->elements;
  segment.own = part.sum;
  segment.members = part.members;
  complete_if_ready(which, sends);
  return sends;
}

result<reduction_sends> average_reduction::from_child(const average_part& part) {
  reduction_sends sends;
  if (part.round < newest_round_ || part.attempt < tree_.version)
    return sends;  // a round or a tree that is over: nobody waits for it any more
  if (part.attempt > tree_.version) {
    if (auto kept = keep_early(part); !kept)
      return kept.err();
    return sends;
  }
  if (auto added = add_child(part, sends); !added)
    return added.err();
  return sends;
}

result<void> average_reduction::keep_early(const average_part& part) {
  auto read = read_sum({part.round, part.index}, part.sum, 0);
  if (!read)
    return read.err();
  // Sent again: the newer one replaces it.
  std::erase_if(early_, [&read](const early_part& early) {
    return early.origin == read->origin && early.which == read->which;
  });
  std::set<average_id> averages{read->which.average};
  for (const auto& early : early_)
    if (early.origin == read->origin)
      averages.insert(early.which.average);
  if (averages.size() > kept_averages)
    return error{fmt::format("node {} sent sums of more averages of tree version {} than any "
                             "relay could have open",
                             read->origin, part.attempt)};
  early_.push_back(early_part{read->which, read->origin, part});
  return success();
}

result<void> average_reduction::add_child(const average_part& part, reduction_sends& sends) {
  auto read = read_sum({part.round, part.index}, part.sum, 0);
  if (!read)
    return read.err();
  const auto& which = read->which;
  if (is_closed(which)) {
    for (const auto& total : kept_) {
      const auto header = compute::read_update_frame(total.sum.value, workspace_);
      if (total.round == part.round && total.index == part.index && header
          && header->header.offset == which.offset)
        sends.back.push_back(total);
    }
    return success();
  }
  const auto parent = parent_of_.find(read->origin);
  if (parent == parent_of_.end() || parent->second != tree_.node)
    return error{fmt::format("node {} sent a sum to average {} of round {}, but it is no child "
                             "of node {} in tree version {}",
                             read->origin, part.index, part.round, tree_.node, tree_.version)};
  if (part.members.empty())
    return error{fmt::format("node {} sent a sum to average {} of round {} naming no member",
                             read->origin, part.index, part.round)};
  if (auto fits = same_size(*read, fmt::format("node {}'s sum", read->origin)); !fits)
    return fits.err();
  drop_before(part.round);
  auto& segment = open_[which];
  segment.elements = read->elements;
  segment.children[read->origin] = part.sum;
  if (segment.members.empty())
    segment.members = part.members;
  complete_if_ready(which, sends);
  return success();
}

bool average_reduction::holds_member(std::uint64_t child,
                                     const std::vector<std::uint64_t>& members) const {
  std::vector<std::uint64_t> pending{child};
  while (!pending.empty()) {
    const auto node = pending.back();
    pending.pop_back();
    if (contains(members, node))
      return true;
    if (const auto below = children_of_.find(node); below != children_of_.end())
      pending.insert(pending.end(), below->second.begin(), below->second.end());
  }
  return false;
}

void average_reduction::complete_if_ready(const key& which, reduction_sends& sends) {
  const auto found = open_.find(which);
  if (found == open_.end() || tree_.version == 0)
    return;
  auto& segment = found->second;
  const bool root = tree_.root == tree_.node;
  if (segment.members.empty() || segment.sent || (!root && !parent_linked_))
    return;
  if (contains(segment.members, tree_.node) && !segment.own)
    return;
  if (const auto children = children_of_.find(tree_.node); children != children_of_.end())
    for (const auto child : children->second)
      if (holds_member(child, segment.members) && segment.children.count(child) == 0)
        return;
  // Its own sum first, then its children's by node id: the same order in every run. Each was
  // checked when it came.
  bool first = true;
  const auto add = [&](const shared_frame& part) {
    auto view = compute::read_update_frame(part.value, workspace_);
    if (!view)
      throw std::logic_error("average_reduction: a checked sum could not be read");
    if (first)
      std::memcpy(sum_.data(), view->payload.data(), sum_.size() * sizeof(float));
    else
      compute::fp32_decode_add(view->payload, sum_);
    first = false;
  };
  sum_.resize(segment.elements);
  if (segment.own)
    add(*segment.own);
  for (const auto& [child, part] : segment.children)
    add(part);
  const auto [round, index] = which.average;
  const compute::frame_header header{tree_.node, 0, index, tree_.version, round, which.offset};
  auto built = compute::build_update_frame(header, compute::dense_fp32_update(sum_), {});
  if (!built)  // the sums fit a frame when they came: so does theirs
    throw std::logic_error("average_reduction: a sum could not be framed: " + built.err().message);
  shared_frame framed{std::move(*built)};
  if (root) {
    take_total(which, average_total{round, index, std::move(framed)}, sends);
    return;
  }
  segment.sent = true;
  sends.up.push_back(average_part{round, index, tree_.version, segment.members, std::move(framed)});
}

void average_reduction::take_total(const key& which, const average_total& total,
                                   reduction_sends& sends) {
  drop_before(which.average.first);
  closed_[which.average].insert(which.offset);
  while (closed_.size() > kept_averages)
    closed_.erase(closed_.begin());
  const auto oldest = closed_.begin()->first;
  kept_.push_back(total);
  std::erase_if(kept_, [&oldest](const average_total& kept) {
    return average_id{kept.round, kept.index} < oldest;
  });
  open_.erase(which);
  std::erase_if(open_, [&oldest](const auto& open) { return open.first.average < oldest; });
  sends.out.push_back(total);
}

result<reduction_sends> average_reduction::total(const average_total& total) {
  reduction_sends sends;
  auto read = read_open(total.round, total.index, total.sum);
  if (!read || !*read)
    return read ? result<reduction_sends>{sends} : read.err();
  if (auto fits = same_size(**read, "a total"); !fits)
    return fits.err();
  take_total((*read)->which, total, sends);
  return sends;
}

} // namespace strom::actors
