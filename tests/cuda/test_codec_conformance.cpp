#define BOOST_TEST_MODULE cuda_codec_conformance
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/cuda/bitmap_encode.hpp"
#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/cuda/device_buffer.hpp"
#include "strom/compute/cuda/threshold_scan.hpp"
#include "strom/compute/random.hpp"
#include "cuda/device_data.hpp"
#include "support/gpu.hpp"

using namespace strom::compute;
using strom::compute::cuda::cuda_context;
using strom::compute::cuda::device_buffer;
using strom::compute::testing::random_values;
using strom::compute::testing::relative_l2;

// The device threshold scan and bitmap encoder against the host kernels. Indices, counts and
// bitmap words must be equal; the device adds and subtracts in the host's order without
// FMA contraction, so residuals are expected to be equal too, and are held to 1e-6 relative
// L2 (bitmap residuals: equal) as the arithmetic is identical element-wise.

namespace {

/// The largest relative L2 error allowed where the arithmetic is identical element-wise.
constexpr double identical_arithmetic = 1e-6;

/// Sizes around the scan's 4096-element tiles, its 32-element mask words and its float4s,
/// and one of many tiles with a tail.
const std::size_t scan_sizes[] = {1, 3, 255, 256, 257, 4095, 4096, 4097, (1u << 20) + 3};

/// Poisons device memory (0xff bytes: NaN floats, -1 indices and all-ones words), so that
/// whatever the kernel under test does not write shows.
template <class T>
void poison(device_buffer<T>& buffer, cuda_context& ctx) {
  if (!buffer.empty())
    cuda::check(cudaMemsetAsync(buffer.data(), 0xff, buffer.size() * sizeof(T), ctx.stream()),
                "cudaMemsetAsync (poison)");
}

/// Copies `host` into a device buffer at float `offset` (1: a pointer that is not 16-byte
/// aligned, so that the element-wise path runs).
device_buffer<float> to_device(const std::vector<float>& host, std::size_t offset,
                               cuda_context& ctx) {
  device_buffer<float> out(host.size() + offset);
  poison(out, ctx);
  if (!host.empty())
    out.upload(host, ctx.stream(), offset);
  return out;
}

template <class T>
std::vector<T> to_host(const device_buffer<T>& buffer, std::size_t offset, std::size_t count,
                       cuda_context& ctx) {
  std::vector<T> out(count);
  if (count > 0)
    buffer.download(out, ctx.stream(), offset);
  ctx.synchronize();
  return out;
}

/// One threshold_scan case: the inputs, and how the scan is asked to run.
struct scan_case {
  std::vector<float> residual, update, also;
  float threshold = 0.0f;
  float scale = 1.0f;
  bool with_also = false;
  std::size_t offset = 0;  ///< floats the device buffers start past 16-byte alignment
};

/// Capacities for a scan whose host count is `hits`: none, fewer than the hits (when there are
/// any) and room for all.
std::vector<std::size_t> capacities_for(std::size_t hits, std::size_t n) {
  std::vector<std::size_t> out{0, n};
  if (hits > 1)
    out.push_back(hits / 2);
  return out;
}

/// Runs the host and the device scan of `c` at `capacity` and compares what each wrote; then
/// commits the listed indices on both sides and compares the residuals again.
void check_scan(const scan_case& c, std::size_t capacity, cuda::threshold_scan_workspace& workspace,
                cuda_context& ctx) {
  const std::size_t n = c.residual.size();
  std::vector<float> residual = c.residual;
  std::vector<float> also = c.with_also ? c.also : std::vector<float>{};
  std::vector<std::int32_t> indices(capacity);
  const std::size_t hits = threshold_scan(residual, c.update, c.threshold, indices, c.scale, also);

  auto device_residual = to_device(c.residual, c.offset, ctx);
  const auto device_update = to_device(c.update, c.offset, ctx);
  auto device_also = to_device(c.with_also ? c.also : std::vector<float>{}, c.offset, ctx);
  device_buffer<std::int32_t> device_indices(std::max<std::size_t>(capacity, 1));
  poison(device_indices, ctx);
  const std::size_t device_hits = cuda::threshold_scan(
    device_residual.data() + c.offset, device_update.data() + c.offset, n, c.threshold,
    capacity > 0 ? device_indices.data() : nullptr, capacity, c.scale,
    c.with_also ? device_also.data() + c.offset : nullptr, workspace, ctx);
  const std::size_t listed = std::min(hits, capacity);

  BOOST_TEST_CONTEXT("n=" << n << " threshold=" << c.threshold << " scale=" << c.scale
                          << " also=" << c.with_also << " offset=" << c.offset
                          << " capacity=" << capacity << " hits=" << hits) {
    BOOST_TEST(device_hits == hits);
    const auto device_listed = to_host(device_indices, 0, listed, ctx);
    BOOST_TEST(device_listed == std::vector<std::int32_t>(indices.begin(),
                                                          indices.begin() + listed),
               boost::test_tools::per_element());
    BOOST_TEST(relative_l2(to_host(device_residual, c.offset, n, ctx), residual) <
               identical_arithmetic);
    if (c.with_also)
      BOOST_TEST(relative_l2(to_host(device_also, c.offset, n, ctx), also) <
                 identical_arithmetic);

    // threshold_commit of what was listed, on both sides.
    threshold_commit(residual, std::span<const std::int32_t>(indices).first(listed),
                     c.threshold);
    cuda::threshold_commit(device_residual.data() + c.offset, device_indices.data(), listed,
                           c.threshold, ctx);
    BOOST_TEST(to_host(device_residual, c.offset, n, ctx) == residual,
               boost::test_tools::per_element());
  }
}

/// Bitmap residuals of `n` elements around `threshold`: every code occurs, and the values at
/// the codes' edges (+/- threshold, -threshold / 2, zeros of both signs) occur exactly.
std::vector<float> bitmap_residual(std::size_t n, float threshold, rng& random) {
  std::vector<float> out = random_values(n, random, -1.5f * threshold, 1.5f * threshold);
  const float edges[] = {threshold, -threshold, -0.5f * threshold, 0.0f, -0.0f,
                         std::nextafter(-0.5f * threshold, 0.0f)};
  for (std::size_t i = 0; i < n; i += 7)
    out[i] = edges[(i / 7) % std::size(edges)];
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(threshold_scan_lists_the_hosts_indices_in_order,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  cuda::threshold_scan_workspace workspace(scan_sizes[std::size(scan_sizes) - 1]);
  rng random(61);
  for (const std::size_t n : scan_sizes) {
    scan_case c;
    c.residual = random_values(n, random, -0.5f, 0.5f);
    c.update = random_values(n, random, -1.0f, 1.0f);
    c.also = random_values(n, random, -3.0f, 3.0f);
    // The new residuals lie within +/-1.5 (+/-1.4 at scale 0.9): 1.3 is reached by few
    // elements (about one in a hundred at scale -1, one in two hundred at 0.9), 0.2 by most.
    for (const float threshold : {1.3f, 0.2f})
      for (const float scale : {-1.0f, 0.9f})
        for (const bool with_also : {false, true})
          for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
            c.threshold = threshold;
            c.scale = scale;
            c.with_also = with_also;
            c.offset = offset;
            // The host's count sets the capacities that are smaller than it.
            std::vector<float> residual = c.residual;
            std::vector<std::int32_t> none;
            const std::size_t hits = threshold_scan(residual, c.update, threshold, none, scale);
            for (const std::size_t capacity : capacities_for(hits, n))
              check_scan(c, capacity, workspace, ctx);
          }
  }
}

BOOST_AUTO_TEST_CASE(threshold_scan_with_no_hits_lists_nothing,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  cuda::threshold_scan_workspace workspace(5000);
  rng random(67);
  scan_case c;
  c.residual = random_values(5000, random, -0.1f, 0.1f);
  c.update = random_values(5000, random, -0.1f, 0.1f);
  c.threshold = 10.0f;
  check_scan(c, 5000, workspace, ctx);
}

BOOST_AUTO_TEST_CASE(threshold_scan_refuses_more_elements_than_its_workspace,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  cuda::threshold_scan_workspace workspace(100);
  device_buffer<float> residual(101), update(101);
  BOOST_CHECK_THROW(cuda::threshold_scan(residual.data(), update.data(), 101, 1.0f, nullptr, 0,
                                         1.0f, nullptr, workspace, ctx),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(bitmap_encode_writes_the_hosts_words_count_and_residual,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  device_buffer<std::uint32_t> count;
  rng random(71);
  for (const std::size_t n : {1u, 15u, 16u, 17u, 255u, 256u, 257u, 4095u, (1u << 20) + 3})
    for (const float threshold : {0.5f, 1e-3f})
      for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
        const std::vector<float> start = bitmap_residual(n, threshold, random);
        std::vector<float> residual = start;
        std::vector<std::uint32_t> words(bitmap_words(n));
        const std::size_t values = bitmap_encode(residual, threshold, words);

        auto device_residual = to_device(start, offset, ctx);
        device_buffer<std::uint32_t> device_words(words.size());
        poison(device_words, ctx);
        if (!count.empty())
          poison(count, ctx);
        const std::size_t device_values = cuda::bitmap_encode(
          device_residual.data() + offset, n, threshold, device_words.data(), count, ctx);
        BOOST_TEST_CONTEXT("n=" << n << " threshold=" << threshold << " offset=" << offset) {
          BOOST_TEST(device_values == values);
          BOOST_TEST(to_host(device_words, 0, words.size(), ctx) == words,
                     boost::test_tools::per_element());
          BOOST_TEST(to_host(device_residual, offset, n, ctx) == residual,
                     boost::test_tools::per_element());
        }
      }
}
