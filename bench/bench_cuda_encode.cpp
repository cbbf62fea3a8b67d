// Encoding on the GPU against the GPU's own copy rate: one JSON object per line for a
// device-to-device copy of the update, the threshold scan at two densities and the bitmap
// encoder, each the median of many runs after warm-up, timed with CUDA events. gbps counts
// the bytes each kernel must move (copy: read + written; threshold_scan: update read,
// residual read and written, 12 bytes an element; bitmap_encode: residual read and written
// plus the words, 8.125 bytes an element), and ratio_to_copy compares it with the copy's.
// Built only with the CUDA backend; where no GPU can run it prints one line saying why.
//
//   bench_cuda_encode [--quick]
//
// --quick measures 2^24 elements only; the default measures 2^24 and 2^26.

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "json_line.hpp"
#include "median.hpp"
#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/cuda/bitmap_encode.hpp"
#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/cuda/device_buffer.hpp"
#include "strom/compute/cuda/threshold_scan.hpp"
#include "strom/compute/device/device_kind.hpp"
#include "strom/compute/random.hpp"

using namespace strom::compute;
using strom::bench::json;
using strom::bench::median;
using strom::bench::print_json;
using strom::bench::rounded;

namespace {

constexpr std::size_t default_sizes[] = {std::size_t{1} << 24, std::size_t{1} << 26};
constexpr std::size_t quick_max_elements = std::size_t{1} << 24;
constexpr std::uint64_t update_seed = 42;
/// Untimed runs first (clocks up, caches and the driver's lazy set-up out of the way), then
/// the timed ones whose median is printed.
constexpr std::size_t warm_up_runs = 5;
constexpr std::size_t timed_runs = 30;

/// A target density and the threshold a standard normal update reaches with it:
/// P(|x| >= t) = density, t = Phi^-1(1 - density / 2).
struct density_point {
  double density;
  float threshold;
};
constexpr density_point densities[] = {{1e-3, 3.2905267f}, {1e-2, 2.5758293f}};

/// Bytes each operation must move per element (see the comment at the top).
constexpr double copy_bytes = 2.0 * sizeof(float);
constexpr double scan_bytes = 3.0 * sizeof(float);
constexpr double bitmap_bytes = 2.0 * sizeof(float) + 2.0 / 16.0;

/// A CUDA event, destroyed with its owner.
class event {
public:
  event() { cuda::check(cudaEventCreate(&event_), "cudaEventCreate"); }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  ~event() { cudaEventDestroy(event_); }
  cudaEvent_t get() const noexcept { return event_; }

private:
  cudaEvent_t event_ = nullptr;
};

/// The median seconds of `body` on ctx's stream over the timed runs; `prepare` runs before
/// each, outside the timed interval (resetting what the body consumes).
template <class Prepare, class Body>
double median_seconds(cuda::cuda_context& ctx, Prepare prepare, Body body) {
  event start, stop;
  std::vector<double> seconds;
  for (std::size_t run = 0; run < warm_up_runs + timed_runs; ++run) {
    prepare();
    cuda::check(cudaEventRecord(start.get(), ctx.stream()), "cudaEventRecord");
    body();
    cuda::check(cudaEventRecord(stop.get(), ctx.stream()), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
    float milliseconds = 0.0f;
    cuda::check(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()),
                "cudaEventElapsedTime");
    if (run >= warm_up_runs)
      seconds.push_back(static_cast<double>(milliseconds) / 1e3);
  }
  return median(seconds);
}

double gbps(std::size_t elements, double bytes_per_element, double seconds) {
  return static_cast<double>(elements) * bytes_per_element / seconds / 1e9;
}

/// One measurement's line; density, threshold and hits are null where they do not apply.
void print(const std::string& device, const char* op, std::size_t elements,
           double bytes_per_element, double seconds, double copy_gbps, const json& density,
           const json& threshold, const json& hits) {
  const double rate = gbps(elements, bytes_per_element, seconds);
  print_json({{"bench", "cuda_encode"},
              {"device", device},
              {"op", op},
              {"elements", elements},
              {"density", density},
              {"threshold", threshold},
              {"hits", hits},
              {"bytes_per_element", bytes_per_element},
              {"median_us", rounded(seconds * 1e6, 2)},
              {"gbps", rounded(rate, 1)},
              {"copy_gbps", rounded(copy_gbps, 1)},
              {"ratio_to_copy", rounded(copy_gbps > 0.0 ? rate / copy_gbps : 0.0, 3)}});
}

void bench_size(std::size_t n, const std::string& device, cuda::cuda_context& ctx) {
  std::vector<float> host_update(n);
  rng random(update_seed);
  for (float& x : host_update)
    x = static_cast<float>(random.normal());
  cuda::device_buffer<float> update(n), residual(n);
  cuda::device_buffer<std::int32_t> indices(n);
  cuda::device_buffer<std::uint32_t> words(bitmap_words(n)), count(1);
  update.upload(host_update, ctx.stream());
  ctx.synchronize();
  const cudaStream_t stream = ctx.stream();
  const std::size_t bytes = n * sizeof(float);

  const double copy_s = median_seconds(
    ctx, [] {},
    [&] {
      cuda::check(cudaMemcpyAsync(residual.data(), update.data(), bytes,
                                  cudaMemcpyDeviceToDevice, stream),
                  "cudaMemcpyAsync (device to device)");
    });
  const double copy_gbps = gbps(n, copy_bytes, copy_s);
  print(device, "copy", n, copy_bytes, copy_s, copy_gbps, nullptr, nullptr, nullptr);

  // A zero residual before each run, so that every run sees the update alone at the
  // chosen density (a growing residual would raise it run by run).
  cuda::threshold_scan_workspace workspace(n);
  const auto zero_residual = [&] {
    cuda::check(cudaMemsetAsync(residual.data(), 0, bytes, stream), "cudaMemsetAsync");
  };
  for (const density_point& point : densities) {
    std::size_t hits = 0;
    const double scan_s = median_seconds(ctx, zero_residual, [&] {
      hits = cuda::threshold_scan(residual.data(), update.data(), n, point.threshold,
                                  indices.data(), n, 1.0f, nullptr, workspace, ctx);
    });
    print(device, "threshold_scan", n, scan_bytes, scan_s, copy_gbps, point.density,
          point.threshold, hits);
  }

  // The bitmap encodes a residual: the update itself, copied in before each run.
  for (const density_point& point : densities) {
    std::size_t values = 0;
    const double bitmap_s = median_seconds(
      ctx,
      [&] {
        cuda::check(cudaMemcpyAsync(residual.data(), update.data(), bytes,
                                    cudaMemcpyDeviceToDevice, stream),
                    "cudaMemcpyAsync (device to device)");
      },
      [&] {
        values = cuda::bitmap_encode(residual.data(), n, point.threshold, words.data(), count,
                                     ctx);
      });
    print(device, "bitmap_encode", n, bitmap_bytes, bitmap_s, copy_gbps, point.density,
          point.threshold, values);
  }
}

} // namespace

int main(int argc, char** argv) {
  std::size_t max_elements = default_sizes[std::size(default_sizes) - 1];
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--quick") {
      max_elements = quick_max_elements;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  const cuda_presence cuda = find_cuda();
  if (!cuda.usable) {
    print_json({{"bench", "cuda_encode"}, {"skipped", cuda.why}});
    return 0;
  }
  cuda::cuda_context ctx;
  for (const std::size_t n : default_sizes)
    if (n <= max_elements)
      bench_size(n, cuda.why, ctx);
  return 0;
}
