#define BOOST_TEST_MODULE codecs_magnitude_select
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "strom/compute/encoders/magnitude_select.hpp"
#include "strom/compute/encoders/magnitude_select_avx512.hpp"
#include "strom/compute/random.hpp"

using namespace strom::compute;

namespace {

using select_kernel = std::function<magnitude_selection(
  std::span<const float>, float, std::span<std::int32_t>)>;

/// The selection one element at a time, as its contract reads.
magnitude_selection reference_select(std::span<const float> values, float threshold,
                                     std::span<std::int32_t> indices) {
  magnitude_selection out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float magnitude = std::fabs(values[i]);
    out.total_mass += std::isnan(magnitude)
                        ? 0.0
                        : std::min<double>(magnitude, std::numeric_limits<float>::max());
    if (!(magnitude >= threshold))
      continue;
    if (out.hits == indices.size())
      return {indices.size() + 1, 0.0, 0.0};
    const auto index = static_cast<std::int32_t>(i + 1);
    indices[out.hits++] = values[i] > 0.0f ? index : -index;
    out.selected_mass += std::min<double>(magnitude, std::numeric_limits<float>::max());
  }
  return out;
}

/// Runs `kernel` and the reference on random buffers around the kernels' widths and their
/// 256-element sums, thresholds from most to none, lists from empty to roomy: the same
/// elements in the same order, sums within float rounding, the overflow told the same way.
void check_against_reference(const select_kernel& kernel, const std::string& name) {
  rng random(41);
  for (const std::size_t n : {1u, 3u, 4u, 15u, 16u, 17u, 255u, 256u, 257u, 1000u, 4099u})
    for (const float threshold : {0.05f, 0.5f, 0.95f, 2.0f})
      for (const std::size_t capacity : {std::size_t{0}, std::size_t{3}, std::size_t{20}, n}) {
        std::vector<float> values(n);
        for (auto& v : values)
          v = random.uniform(-1.0f, 1.0f);
        std::vector<std::int32_t> got(capacity), want(capacity);
        const auto a = kernel(values, threshold, got);
        const auto b = reference_select(values, threshold, want);
        BOOST_TEST_CONTEXT(name << " n=" << n << " threshold=" << threshold
                                << " capacity=" << capacity) {
          BOOST_TEST(a.hits == b.hits);
          if (b.hits > capacity)
            continue;
          for (std::size_t k = 0; k < b.hits; ++k)
            BOOST_TEST(got[k] == want[k]);
          BOOST_TEST(a.selected_mass == b.selected_mass, boost::test_tools::tolerance(1e-5));
          BOOST_TEST(a.total_mass == b.total_mass, boost::test_tools::tolerance(1e-5));
        }
      }
}

} // namespace

BOOST_AUTO_TEST_CASE(the_portable_kernel_selects_as_the_reference_does) {
  check_against_reference(magnitude_select_portable, "portable");
}

BOOST_AUTO_TEST_CASE(the_avx512_kernel_selects_as_the_reference_does) {
  const select_kernel avx512 = [](std::span<const float> values, float threshold,
                                  std::span<std::int32_t> indices) {
    return *magnitude_select_avx512(values, threshold, indices);
  };
  std::vector<std::int32_t> probe(1);
  if (!magnitude_select_avx512(std::vector<float>{1.0f}, 0.5f, probe)) {
    BOOST_TEST_MESSAGE("skipped: this CPU has no AVX-512F");
    return;
  }
  check_against_reference(avx512, "avx512");
}

BOOST_AUTO_TEST_CASE(signs_and_positions_are_kept_and_the_masses_add_up) {
  const std::vector<float> values = {0.1f, -3.0f, 0.0f, 2.0f, -0.5f, 4.0f};
  std::vector<std::int32_t> indices(6);
  const auto selection = magnitude_select(values, 1.0f, indices);
  BOOST_TEST(selection.hits == 3u);
  BOOST_TEST(indices[0] == -2);
  BOOST_TEST(indices[1] == 4);
  BOOST_TEST(indices[2] == 6);
  BOOST_TEST(selection.selected_mass == 9.0, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(selection.total_mass == 9.6, boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(more_hits_than_the_list_holds_is_told_as_one_more) {
  const std::vector<float> values(100, 1.0f);
  std::vector<std::int32_t> indices(6);
  BOOST_TEST(magnitude_select(values, 0.5f, indices).hits == 7u);
  BOOST_TEST(magnitude_select_portable(values, 0.5f, indices).hits == 7u);
}

BOOST_AUTO_TEST_CASE(nan_counts_nothing_and_inf_the_largest_float) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float largest = std::numeric_limits<float>::max();
  std::vector<float> values(40, 0.0f);
  values[3] = nan;
  values[21] = -inf;
  values[30] = 1.0f;
  std::vector<std::int32_t> indices(8);
  for (const auto& kernel : {select_kernel(magnitude_select), select_kernel(magnitude_select_portable)}) {
    const auto selection = kernel(values, 0.5f, indices);
    BOOST_TEST(selection.hits == 2u);
    BOOST_TEST(indices[0] == -22);
    BOOST_TEST(indices[1] == 31);
    BOOST_TEST(std::isfinite(selection.total_mass));
    BOOST_TEST(selection.total_mass == static_cast<double>(largest) + 1.0,
               boost::test_tools::tolerance(1e-6));
  }
}

BOOST_AUTO_TEST_CASE(sums_of_huge_magnitudes_stay_finite) {
  // Float lanes of 3e38s would overflow at the second; the sums are scaled so that they cannot.
  const std::vector<float> values(600, -3e38f);
  std::vector<std::int32_t> indices(600);
  for (const auto& kernel : {select_kernel(magnitude_select), select_kernel(magnitude_select_portable)}) {
    const auto selection = kernel(values, 1.0f, indices);
    BOOST_TEST(selection.hits == 600u);
    BOOST_TEST(selection.selected_mass == 600 * 3e38, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(selection.total_mass == 600 * 3e38, boost::test_tools::tolerance(1e-6));
  }
}
