#include "strom/compute/layers/pooling.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>

namespace strom::compute {

namespace {

const char* name_of(pooling_kind reduction) {
  return reduction == pooling_kind::max ? "max_pooling" : "average_pooling";
}

} // namespace

pooling::pooling(shape input, pooling_kind reduction, std::size_t kernel, std::size_t stride,
                 std::size_t padding)
  : input_(input),
    reduction_(reduction),
    window_{kernel, stride, padding},
    output_(window_.output_shape(input, input.channels, name_of(reduction))) {
  if (padding >= kernel)
    throw std::invalid_argument(fmt::format("{}: padding {} must be smaller than the kernel {}",
                                            name_of(reduction), padding, kernel));
  if (input.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument(fmt::format("{}: input of {} floats exceeds 32-bit indices",
                                            name_of(reduction), input.size()));
}

std::string pooling::kind() const {
  return name_of(reduction_);
}

shape pooling::output_shape() const {
  return output_;
}

pooling::covered_range pooling::covered(std::size_t o, std::size_t extent) const noexcept {
  const std::size_t start = o * window_.stride;  // in padded coordinates
  const std::size_t begin = start > window_.padding ? start - window_.padding : 0;
  const std::size_t end = std::min(extent, start + window_.kernel - window_.padding);
  return {begin, end};
}

void pooling::reserve(std::size_t max_batch) {
  if (reduction_ == pooling_kind::max)
    winners_.reserve(output_.size(), max_batch);
}

std::size_t pooling::workspace_bytes(std::size_t max_batch) const {
  return reduction_ == pooling_kind::max ? output_.size() * max_batch * sizeof(std::uint32_t) : 0;
}

void pooling::forward(std::span<const float> input, std::span<float> output, batch_rows rows,
                      pass mode) {
  const std::size_t batch = rows.count;
  assert(input.size() >= batch * input_.size() && output.size() >= batch * output_.size());
  if (reduction_ == pooling_kind::average) {
    forward_average(input.data(), output.data(), batch);
    return;
  }
  std::uint32_t* winners =
    mode == pass::training ? winners_.for_rows(rows.first, batch).data() : nullptr;
  forward_max(input.data(), output.data(), batch, winners);
}

void pooling::backward(std::span<const float> input, std::span<const float> output,
                       std::span<const float> output_gradient, std::span<float> input_gradient,
                       batch_rows rows) {
  const std::size_t batch = rows.count;
  if (input_gradient.empty())
    return;
  assert(output_gradient.size() >= batch * output_.size() &&
         input_gradient.size() >= batch * input_.size());
  std::fill(input_gradient.begin(),
            input_gradient.begin() + static_cast<std::ptrdiff_t>(batch * input_.size()), 0.0f);
  if (reduction_ == pooling_kind::max)
    backward_max(output_gradient.data(), input_gradient.data(), batch,
                 winners_.for_rows(rows.first, batch).data());
  else
    backward_average(output_gradient.data(), input_gradient.data(), batch);
}

void pooling::forward_max(const float* input, float* output, std::size_t batch,
                          std::uint32_t* winners) {
  const std::size_t plane = input_.height * input_.width;
  for (std::size_t b = 0; b < batch; ++b) {
    const float* sample = input + b * input_.size();
    for (std::size_t c = 0; c < input_.channels; ++c) {
      for (std::size_t oy = 0; oy < output_.height; ++oy) {
        const auto rows = covered(oy, input_.height);
        for (std::size_t ox = 0; ox < output_.width; ++ox) {
          const auto cols = covered(ox, input_.width);
          std::size_t best = c * plane + rows.begin * input_.width + cols.begin;
          float best_value = sample[best];
          for (std::size_t y = rows.begin; y < rows.end; ++y) {
            for (std::size_t x = cols.begin; x < cols.end; ++x) {
              // Selects rather than branches: which input wins is data-dependent, so a
              // branch here mispredicts often.
              const std::size_t at = c * plane + y * input_.width + x;
              const bool better = sample[at] > best_value;
              best_value = better ? sample[at] : best_value;
              best = better ? at : best;
            }
          }
          *output++ = best_value;
          if (winners != nullptr)
            *winners++ = static_cast<std::uint32_t>(best);
        }
      }
    }
  }
}

void pooling::forward_average(const float* input, float* output, std::size_t batch) const {
  const float scale = 1.0f / static_cast<float>(window_.kernel * window_.kernel);
  const std::size_t plane = input_.height * input_.width;
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t c = 0; c < input_.channels; ++c) {
      const float* in = input + b * input_.size() + c * plane;
      for (std::size_t oy = 0; oy < output_.height; ++oy) {
        const auto rows = covered(oy, input_.height);
        for (std::size_t ox = 0; ox < output_.width; ++ox) {
          const auto cols = covered(ox, input_.width);
          float total = 0.0f;
          for (std::size_t y = rows.begin; y < rows.end; ++y)
            for (std::size_t x = cols.begin; x < cols.end; ++x)
              total += in[y * input_.width + x];
          *output++ = total * scale;
        }
      }
    }
  }
}

void pooling::backward_max(const float* output_gradient, float* input_gradient,
                           std::size_t batch, const std::uint32_t* winners) const {
  for (std::size_t b = 0; b < batch; ++b) {
    float* din = input_gradient + b * input_.size();
    const std::size_t first = b * output_.size();
    for (std::size_t i = first; i < first + output_.size(); ++i)
      din[winners[i]] += output_gradient[i];
  }
}

void pooling::backward_average(const float* output_gradient, float* input_gradient,
                               std::size_t batch) const {
  const float scale = 1.0f / static_cast<float>(window_.kernel * window_.kernel);
  const std::size_t plane = input_.height * input_.width;
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t c = 0; c < input_.channels; ++c) {
      float* din = input_gradient + b * input_.size() + c * plane;
      for (std::size_t oy = 0; oy < output_.height; ++oy) {
        const auto rows = covered(oy, input_.height);
        for (std::size_t ox = 0; ox < output_.width; ++ox) {
          const auto cols = covered(ox, input_.width);
          const float share = *output_gradient++ * scale;
          for (std::size_t y = rows.begin; y < rows.end; ++y)
            for (std::size_t x = cols.begin; x < cols.end; ++x)
              din[y * input_.width + x] += share;
        }
      }
    }
  }
}

} // namespace strom::compute
