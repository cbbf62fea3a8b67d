#include "strom/actors/averaging/parameter_averaging.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <stdexcept>

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

void scale_segment_into(std::span<const std::byte> segment, std::size_t first, float scale,
                        std::span<float> parameters, std::span<float> updater_state) {
  // Little-endian floats, read as decode_add reads a dense payload.
  const auto at = [&segment](std::size_t i) {
    float value;
    std::memcpy(&value, segment.data() + i * sizeof(float), sizeof value);
    return value;
  };
  const std::size_t n = segment.size() / sizeof(float);
  // Contribution element c (c >= 1) is parameter c - 1, then updater state element c - 1 - P.
  const auto write = [&](std::span<float> out, std::size_t out_first_element) {
    const std::size_t from = std::max(first, out_first_element);
    const std::size_t to = std::min(first + n, out_first_element + out.size());
    for (std::size_t c = from; c < to; ++c)
      out[c - out_first_element] = at(c - first) * scale;
  };
  write(parameters, 1);
  write(updater_state, 1 + parameters.size());
}

void take_average_of(std::span<const std::byte> sum, std::span<float> parameters,
                     std::span<float> updater_state) {
  float weight;
  std::memcpy(&weight, sum.data(), sizeof weight);
  scale_segment_into(sum, 0, 1.0f / weight, parameters, updater_state);
}

void averaging_totals::start_round(std::uint32_t round) {
  round_ = round;
  next_ = 0;
  totals_.clear();
}

result<void> averaging_totals::add(const average_total& total) {
  if (total.round != round_)
    return success();  // a late one of an earlier round: nobody waits for it
  auto view = compute::read_update_frame(total.sum.value, workspace_);
  if (!view)
    return view.err();
  const auto offset = view->header.offset;
  const bool fits = offset < elements_ && offset % average_segment_elements == 0
                    && view->elements == std::min(average_segment_elements, elements_ - offset);
  if (view->enc != compute::encoding::dense_fp32 || !fits)
    return error{fmt::format("a total of average {} of round {} is no segment of a sum of this "
                             "model's {} contribution elements: {} elements from {} as {}",
                             total.index, total.round, elements_, view->elements, offset,
                             compute::to_string(view->enc))};
  totals_[total.index][offset] = total.sum;
  return success();
}

bool averaging_totals::complete(std::uint64_t index) const {
  const auto total = totals_.find(index);
  const auto segments = (elements_ + average_segment_elements - 1) / average_segment_elements;
  return total != totals_.end() && total->second.size() == segments;
}

void averaging_totals::take(std::uint64_t index, std::span<float> parameters,
                            std::span<float> updater_state) {
  const auto total = totals_.find(index);
  float scale = 0.0f;
  // The relay checked the values (finite) before it passed the segments on; the first holds
  // the weight.
  for (const auto& [offset, segment] : total->second) {
    auto view = compute::read_update_frame(segment.value, workspace_);
    if (!view)  // it was read when it came
      throw std::logic_error("averaging_totals: a total could not be read again");
    if (offset == 0) {
      float weight;
      std::memcpy(&weight, view->payload.data(), sizeof weight);
      scale = 1.0f / weight;
    }
    scale_segment_into(view->payload, offset, scale, parameters, updater_state);
  }
  totals_.erase(totals_.begin(), std::next(total));
}

} // namespace strom::actors
