#pragma once
// Test data for the CUDA backend's tests: seeded host values, their copies on the device,
// device buffers poisoned with NaN so that an element a kernel fails to write shows up, and
// the relative L2 error the conformance tests compare with.

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include <cuda_runtime.h>

#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/cuda/device_buffer.hpp"
#include "strom/compute/random.hpp"
#include "support/random_values.hpp"

namespace strom::compute::testing {

/// A device copy of `values`.
template <class T>
cuda::device_buffer<T> to_device(std::span<const T> values, cuda::cuda_context& ctx) {
  cuda::device_buffer<T> buffer(values.size());
  if (!values.empty())
    buffer.upload(values, ctx.stream());
  return buffer;
}

template <class T>
cuda::device_buffer<T> to_device(const std::vector<T>& values, cuda::cuda_context& ctx) {
  return to_device(std::span<const T>(values), ctx);
}

/// The buffer's contents once everything queued on ctx's stream has run.
template <class T>
std::vector<T> to_host(const cuda::device_buffer<T>& buffer, cuda::cuda_context& ctx) {
  std::vector<T> values(buffer.size());
  if (!values.empty())
    buffer.download(values, ctx.stream());
  ctx.synchronize();
  return values;
}

/// Fills the buffer with 0xFF bytes: every float a NaN, so that an element left unwritten
/// fails any comparison.
inline void poison(cuda::device_buffer<float>& buffer, cuda::cuda_context& ctx) {
  if (!buffer.empty())
    cuda::check(cudaMemsetAsync(buffer.data(), 0xFF, buffer.size() * sizeof(float),
                                ctx.stream()),
                "cudaMemsetAsync (poison)");
}

/// A buffer of n poisoned floats.
inline cuda::device_buffer<float> poisoned(std::size_t n, cuda::cuda_context& ctx) {
  cuda::device_buffer<float> buffer(n);
  poison(buffer, ctx);
  return buffer;
}

/// ||device - host|| / ||host|| in double; NaN where the device left a NaN or the sizes
/// differ, so that `< tolerance` fails.
inline double relative_l2(std::span<const float> device, std::span<const float> host) {
  if (device.size() != host.size())
    return NAN;
  double difference = 0.0;
  double reference = 0.0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    const double d = static_cast<double>(device[i]) - static_cast<double>(host[i]);
    difference += d * d;
    reference += static_cast<double>(host[i]) * static_cast<double>(host[i]);
  }
  return std::sqrt(difference / reference);
}

} // namespace strom::compute::testing
