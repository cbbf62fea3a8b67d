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

void averaging_sums::start_round(std::uint32_t round, const std::vector<std::uint64_t>& origins,
                                 const std::vector<std::uint32_t>& workers) {
  round_ = round;
  rounds_.erase(rounds_.begin(), rounds_.lower_bound(round));
  auto& members = rounds_[round].members;
  members.clear();
  for (std::size_t i = 0; i < origins.size() && i < workers.size(); ++i)
    members[origins[i]] = workers[i];
}

result<std::optional<std::uint64_t>> averaging_sums::add(std::uint64_t origin,
                                                         std::uint32_t worker,
                                                         std::uint32_t round,
                                                         std::span<const float> values) {
  if (values.size() != elements_)
    return error{fmt::format("a contribution of node {} has {} elements, expected {}", origin,
                             values.size(), elements_)};
  return add_with(origin, worker, round, [&](std::span<float> sum) -> result<void> {
    std::transform(sum.begin(), sum.end(), values.begin(), sum.begin(),
                   [](float total, float value) { return total + value; });
    return success();
  });
}

result<std::optional<std::uint64_t>> averaging_sums::add(const compute::update_frame_view& frame) {
  const auto& header = frame.header;
  if (frame.enc != compute::encoding::dense_fp32 || header.offset != 0
      || frame.elements != elements_)
    return error{fmt::format("a frame of node {} is no contribution: {} elements from {} as {}, "
                             "expected {} from 0 as dense_fp32",
                             header.origin_node, frame.elements, header.offset,
                             compute::to_string(frame.enc), elements_)};
  return add_with(header.origin_node, header.worker, header.epoch, [&](std::span<float> sum) {
    return compute::decode_add(frame.enc, 0.0f, frame.payload, sum);
  });
}

result<std::optional<std::uint64_t>> averaging_sums::add_own(std::uint64_t origin,
                                                             std::uint32_t worker,
                                                             std::uint32_t round) {
  return add_with(origin, worker, round, {});
}

result<std::optional<std::uint64_t>> averaging_sums::add_with(
  std::uint64_t origin, std::uint32_t worker, std::uint32_t round,
  const std::function<result<void>(std::span<float>)>& add_into) {
  if (round < round_)
    return std::optional<std::uint64_t>{};
  if (round > round_ + 1)
    return error{fmt::format("a contribution of node {} to round {}, but this worker is in "
                             "round {}",
                             origin, round, round_)};
  auto& sums = rounds_[round];
  // The next round's members are not known yet: complete() counts only members.
  if (round == round_) {
    const auto member = sums.members.find(origin);
    if (member == sums.members.end() || worker >= member->second)
      return error{fmt::format("a contribution of worker {} of node {}, which is not in round {}",
                               worker, origin, round)};
  }
  auto& next = sums.next[{origin, worker}];
  if (next > sums.taken + 1)
    return error{fmt::format("a contribution of worker {} of node {} to average {} of round {}, "
                             "but average {} is still open",
                             worker, origin, next, round, sums.taken)};
  auto& open = sums.open[next];
  if (!add_into) {
    open.own = true;
  } else {
    if (open.sum.empty()) {
      if (!spare_.empty()) {
        open.sum = std::move(spare_.back());
        spare_.pop_back();
      }
      open.sum.assign(elements_, 0.0f);
    }
    // The payload is checked before anything is added: a refused one leaves the sum as it was.
    if (auto added = add_into(open.sum); !added)
      return added.err();
  }
  ++open.came[origin];
  return std::optional<std::uint64_t>{next++};
}

void averaging_sums::forget(std::uint64_t origin) {
  for (auto& [round, sums] : rounds_)
    sums.members.erase(origin);
}

bool averaging_sums::complete(std::uint64_t index) const {
  const auto sums = rounds_.find(round_);
  if (sums == rounds_.end())
    return false;
  const auto open = sums->second.open.find(index);
  if (open == sums->second.open.end())
    return false;
  return std::all_of(sums->second.members.begin(), sums->second.members.end(),
                     [&](const auto& member) {
                       const auto came = open->second.came.find(member.first);
                       return came != open->second.came.end() && came->second >= member.second;
                     });
}

void averaging_sums::take(std::uint64_t index, std::span<float> parameters,
                          std::span<float> updater_state) {
  auto& sums = rounds_.at(round_);
  auto open = sums.open.find(index);
  const auto& sum = open->second.sum;
  if (!sum.empty()) {  // else only the trainer's own came: its replica is the average
    const bool own = open->second.own;
    const float scale = 1.0f / (sum.front() + (own ? 1.0f : 0.0f));
    const auto average = [own, scale](std::span<const float> totals, std::span<float> out) {
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = (totals[i] + (own ? out[i] : 0.0f)) * scale;
    };
    const std::span<const float> totals{sum};
    average(totals.subspan(1, parameters.size()), parameters);
    if (sum.size() > 1 + parameters.size())
      average(totals.subspan(1 + parameters.size()), updater_state);
  }
  if (!sum.empty())
    spare_.push_back(std::move(open->second.sum));
  sums.open.erase(open);
  sums.taken = index + 1;
}

} // namespace strom::actors
