// Inverted dropout: training zeroes each element with probability `rate` and scales the kept
// ones by 1 / (1 - rate); inference copies. Element i of the n-th training pass is dropped by
// splitmix64's i-th output from a state drawn from (seed, n): a counter-based generator, so
// every thread draws its own element independently and backward redraws the mask of the last
// pass instead of keeping it in memory.

#include "strom/compute/cuda/layers/dropout.hpp"

#include <cstddef>
#include <cstdint>

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

/// splitmix64's increment (Steele, Lea and Flood, 2014): the golden ratio in 64 bits.
inline constexpr std::uint64_t golden_gamma = 0x9e3779b97f4a7c15ULL;

/// splitmix64's finaliser: a bijective mix of 64 bits.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// What one pass's mask is drawn from: element i is dropped when the high 32 bits of
/// mix64(key + (i + 1) * golden_gamma) fall below drop_below (= rate * 2^32).
struct mask_draw {
  std::uint64_t key;
  std::uint64_t drop_below;
  float keep_scale;

  __device__ float operator()(std::size_t i) const {
    const std::uint64_t bits = mix64(key + (i + 1) * golden_gamma);
    return (bits >> 32) < drop_below ? 0.0f : keep_scale;
  }
};

/// out = in * mask (also din = dout * mask: the same multiply).
__global__ void apply_mask(const float* in, float* out, std::size_t n, mask_draw mask) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n)
    out[i] = in[i] * mask(i);
}

class device_dropout final : public device_layer {
public:
  device_dropout(std::size_t sample_size, float rate, std::uint64_t seed)
    : sample_size_(sample_size),
      seed_(mix64(seed)),
      // rate < 1, so the threshold is below 2^32 and the top 32 bits can reach it.
      drop_below_(static_cast<std::uint64_t>(static_cast<double>(rate) * 0x1.0p32)),
      keep_scale_(1.0f / (1.0f - rate)) {}

  void forward(const float* input, float* output, std::size_t batch, pass mode,
               cuda_context& ctx) override {
    const std::size_t n = batch * sample_size_;
    if (mode == pass::inference) {
      check(cudaMemcpyAsync(output, input, n * sizeof(float), cudaMemcpyDeviceToDevice,
                            ctx.stream()),
            "cudaMemcpyAsync (dropout inference)");
      return;
    }
    last_mask_ = {mix64(seed_ + ++passes_ * golden_gamma), drop_below_, keep_scale_};
    apply_mask<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(input, output, n, last_mask_);
    check_launch("apply_mask");
  }

  void backward(const float* input, const float* output, const float* output_gradient,
                float* input_gradient, std::size_t batch, cuda_context& ctx) override {
    if (input_gradient == nullptr)
      return;
    const std::size_t n = batch * sample_size_;
    apply_mask<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(output_gradient,
                                                                  input_gradient, n, last_mask_);
    check_launch("apply_mask");
  }

private:
  std::size_t sample_size_;
  std::uint64_t seed_;
  std::uint64_t drop_below_;
  float keep_scale_;
  /// Training passes so far: the counter each pass's mask is drawn from.
  std::uint64_t passes_ = 0;
  mask_draw last_mask_{};
};

} // namespace

std::unique_ptr<device_layer> make_device_dropout(std::size_t sample_size, float rate,
                                                  std::uint64_t seed) {
  return std::make_unique<device_dropout>(sample_size, rate, seed);
}

} // namespace strom::compute::cuda
