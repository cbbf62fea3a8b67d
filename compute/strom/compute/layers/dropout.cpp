#include "strom/compute/layers/dropout.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace strom::compute {

namespace {

/// Each half of the count stays below 2^24, where every integer is a float.
constexpr std::uint64_t half_bits = 24;
constexpr std::uint64_t half_mask = (std::uint64_t{1} << half_bits) - 1;

/// Uniform in [0, 1) from element k of a seed's stream: splitmix64's output k, a generator
/// whose every element is a function of the counter alone.
double uniform_at(std::uint64_t seed, std::uint64_t k) noexcept {
  std::uint64_t z = seed + (k + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

} // namespace

dropout::dropout(shape input, float rate, std::uint64_t seed)
  : shape_(input), rate_(rate), seed_(seed) {
  if (!(rate >= 0.0f && rate < 1.0f))
    throw std::invalid_argument(fmt::format("dropout: rate {} is outside [0, 1)", rate));
}

std::string dropout::kind() const {
  return "dropout";
}

shape dropout::output_shape() const {
  return shape_;
}

void dropout::initialize(std::span<float>, std::span<float> state, rng&) const {
  std::fill(state.begin(), state.end(), 0.0f);
}

void dropout::bind(std::span<float>, std::span<float>, std::span<float> state) {
  draws_ = state;
}

void dropout::reserve(std::size_t max_batch) {
  mask_.reserve(shape_.size(), max_batch);
}

std::size_t dropout::workspace_bytes(std::size_t max_batch) const {
  return shape_.size() * max_batch * sizeof(float);
}

void dropout::forward(std::span<const float> input, std::span<float> output, batch_rows rows,
                      pass mode) {
  const std::size_t batch = rows.count;
  const std::size_t n = batch * shape_.size();
  assert(input.size() >= n && output.size() >= n);
  if (mode == pass::inference) {
    std::copy(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(n), output.begin());
    return;
  }
  assert(draws_.size() == state_count());
  // Averaged layer state (parameter averaging) may leave a fraction: the count is its floor.
  const auto drawn = static_cast<std::uint64_t>(draws_[0])
                     + (static_cast<std::uint64_t>(draws_[1]) << half_bits);
  draws_[0] = static_cast<float>((drawn + n) & half_mask);
  draws_[1] = static_cast<float>(((drawn + n) >> half_bits) & half_mask);
  float* mask = mask_.for_rows(rows.first, batch).data();
  const float keep_scale = 1.0f / (1.0f - rate_);
  const double rate = rate_;
  // The draws fill the mask first so that the multiply below stays a plain vector loop.
  for (std::size_t i = 0; i < n; ++i)
    mask[i] = uniform_at(seed_, drawn + i) < rate ? 0.0f : keep_scale;
  const float* in = input.data();
  float* out = output.data();
  for (std::size_t i = 0; i < n; ++i)
    out[i] = in[i] * mask[i];
}

void dropout::backward(std::span<const float> input, std::span<const float> output,
                       std::span<const float> output_gradient, std::span<float> input_gradient,
                       batch_rows rows) {
  const std::size_t batch = rows.count;
  if (input_gradient.empty())
    return;
  const std::size_t n = batch * shape_.size();
  assert(output_gradient.size() >= n && input_gradient.size() >= n);
  const float* mask = mask_.for_rows(rows.first, batch).data();
  const float* dout = output_gradient.data();
  float* din = input_gradient.data();
  for (std::size_t i = 0; i < n; ++i)
    din[i] = dout[i] * mask[i];
}

} // namespace strom::compute
