#include "strom/actors/parameter_averaging.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strom::actors {

std::size_t contribution_elements(std::size_t parameters, std::size_t updater_state,
                                  const averaging_options& options) {
  return 1 + parameters + (options.updaters ? updater_state : 0);
}

bool contributes_at(std::uint64_t step, std::uint64_t common_steps,
                    const averaging_options& options) {
  return options.frequency > 0 && step > 0 && step <= common_steps
         && (step % options.frequency == 0 || step == common_steps);
}

void averaging_sums::start_round(std::uint32_t round, const std::vector<std::uint64_t>& origins) {
  round_ = round;
  rounds_.erase(rounds_.begin(), rounds_.lower_bound(round));
  rounds_[round].members = origins;
}

result<std::optional<std::uint64_t>> averaging_sums::add(const compute::update_frame_view& frame) {
  const auto& header = frame.header;
  if (frame.enc != compute::encoding::dense_fp32 || header.offset != 0
      || frame.elements != elements_)
    return error{fmt::format("a frame of node {} is no contribution: {} elements from {} as {}, "
                             "expected {} from 0 as dense_fp32",
                             header.origin_node, frame.elements, header.offset,
                             compute::to_string(frame.enc), elements_)};
  return add_with(header.origin_node, header.epoch, [&](std::span<float> sum) {
    return compute::decode_add(frame.enc, 0.0f, frame.payload, sum);
  });
}

result<std::optional<std::uint64_t>> averaging_sums::add_own(std::uint64_t origin,
                                                             std::uint32_t round) {
  return add_with(origin, round, {});
}

result<std::optional<std::uint64_t>> averaging_sums::add_with(
  std::uint64_t origin, std::uint32_t round,
  const std::function<result<void>(std::span<float>)>& add_into) {
  if (round < round_)
    return std::optional<std::uint64_t>{};
  if (round > round_ + 1)
    return error{fmt::format("a contribution of node {} to round {}, but this worker is in "
                             "round {}",
                             origin, round, round_)};
  auto& sums = rounds_[round];
  // The next round's members are not known yet: complete() counts only members.
  if (round == round_
      && std::find(sums.members.begin(), sums.members.end(), origin) == sums.members.end())
    return error{fmt::format("a contribution of node {}, which is not in round {}", origin,
                             round)};
  auto& next = sums.next[origin];
  if (next > sums.taken + 1)
    return error{fmt::format("a contribution of node {} to average {} of round {}, but average "
                             "{} is still open",
                             origin, next, round, sums.taken)};
  auto& open = sums.open[next];
  if (add_into) {
    if (open.sum.empty()) {
      if (!spare_.empty()) {
        open.sum = std::move(spare_.back());
        spare_.pop_back();
      }
      open.sum.assign(elements_, 0.0f);
    }
    if (auto added = add_into(open.sum); !added)
      return added.err();
  }
  open.came.insert(origin);
  return std::optional<std::uint64_t>{next++};
}

void averaging_sums::forget(std::uint64_t origin) {
  for (auto& [round, sums] : rounds_)
    sums.members.erase(std::remove(sums.members.begin(), sums.members.end(), origin),
                       sums.members.end());
}

bool averaging_sums::complete(std::uint64_t index) const {
  const auto sums = rounds_.find(round_);
  if (sums == rounds_.end())
    return false;
  const auto open = sums->second.open.find(index);
  if (open == sums->second.open.end())
    return false;
  return std::all_of(sums->second.members.begin(), sums->second.members.end(),
                     [&](std::uint64_t member) { return open->second.came.count(member) > 0; });
}

void averaging_sums::take(std::uint64_t index, std::span<const float> own_sum,
                          std::span<float> parameters, std::span<float> updater_state) {
  auto& sums = rounds_.at(round_);
  auto open = sums.open.find(index);
  const std::span<const float> remote{open->second.sum};
  const float weight = own_sum.front() + (remote.empty() ? 0.0f : remote.front());
  const float scale = 1.0f / weight;
  const auto average = [&](std::size_t from, std::span<float> out) {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = (own_sum[from + i] + (remote.empty() ? 0.0f : remote[from + i])) * scale;
  };
  average(1, parameters);
  if (own_sum.size() > 1 + parameters.size())
    average(1 + parameters.size(), updater_state);
  if (!remote.empty())
    spare_.push_back(std::move(open->second.sum));
  sums.open.erase(open);
  sums.taken = index + 1;
}

} // namespace strom::actors
