#define BOOST_TEST_MODULE codecs_invariant
#include <boost/test/unit_test.hpp>

// Nothing is lost, only delayed: over long random sequences, everything decoded plus the
// final residual equals everything encoded, element by element, up to float rounding.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/encoders/two_bit_encoder.hpp"
#include "strom/compute/random.hpp"

using namespace strom::compute;

namespace {

constexpr std::size_t iterations = 2000;
constexpr std::size_t sizes[] = {37, 1000, 8191};

// Per operation a float add rounds by at most half an ulp of the larger magnitude.
constexpr double rounding_per_op = 0x1.0p-24;

/// Totals of one run, per element.
struct ledger {
  std::vector<double> sent_in;
  std::vector<double> decoded;
  double rounding_budget = 0.0;
  std::size_t messages[5] = {};
};

// Gradient-like updates whose scale wanders over four decades, so that runs see empty
// iterations, sparse messages and bitmaps.
std::vector<float> next_update(rng& random, std::size_t n) {
  const float scale = std::pow(10.0f, random.uniform(-5.0f, -1.0f));
  std::vector<float> update(n);
  for (float& u : update) u = random.uniform(-scale, scale);
  return update;
}

template <class Encode>
ledger run(std::size_t n, std::uint64_t seed, Encode encode_and_decode) {
  rng random(seed);
  ledger book{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  std::vector<float> scratch(n);
  for (std::size_t it = 0; it < iterations; ++it) {
    const auto update = next_update(random, n);
    for (std::size_t i = 0; i < n; ++i) book.sent_in[i] += update[i];
    std::fill(scratch.begin(), scratch.end(), 0.0f);
    const auto [enc, bound] = encode_and_decode(update, scratch);
    if (enc) ++book.messages[static_cast<int>(*enc)];
    for (std::size_t i = 0; i < n; ++i) book.decoded[i] += scratch[i];
    book.rounding_budget += 2.0 * rounding_per_op * bound;
  }
  return book;
}

void check(const ledger& book, std::span<const float> residual, const std::string& what) {
  double worst = 0.0;
  for (std::size_t i = 0; i < residual.size(); ++i)
    worst = std::max(worst, std::fabs(book.decoded[i] + residual[i] - book.sent_in[i]));
  BOOST_TEST_INFO(what << ": worst error " << worst << ", budget " << book.rounding_budget);
  BOOST_TEST(worst <= book.rounding_budget);
}

float max_abs(std::span<const float> values) {
  float m = 0.0f;
  for (float v : values) m = std::max(m, std::fabs(v));
  return m;
}

void check_threshold_encoder(threshold_encoder_options options, const std::string& name) {
  for (std::size_t n : sizes) {
    threshold_encoder encoder(n, options);
    const auto book = run(n, 1000 + n, [&](const std::vector<float>& update, std::vector<float>& out) {
      const float before = max_abs(encoder.residual()) + max_abs(update) + encoder.threshold();
      const auto message = encoder.encode(update);
      std::optional<encoding> enc;
      if (message) {
        BOOST_REQUIRE(decode_add(message->enc, message->threshold, message->payload, out).ok());
        enc = message->enc;
      }
      return std::pair{enc, static_cast<double>(before)};
    });
    check(book, encoder.residual(), name + " n=" + std::to_string(n));
    BOOST_TEST_MESSAGE(name << " n=" << n << ": " << book.messages[0] << " sparse, " << book.messages[1] << " bitmap of " << iterations);
    if (n >= 1000) {  // long enough to see both sparse messages and bitmaps
      BOOST_TEST(book.messages[static_cast<int>(encoding::threshold)] > 0u, name << " n=" << n);
      BOOST_TEST(book.messages[static_cast<int>(encoding::bitmap)] > 0u, name << " n=" << n);
    }
  }
}

threshold_encoder_options unclipped(threshold_policy policy) {
  threshold_encoder_options options;
  options.policy = policy;
  options.clip_every = 0;
  return options;
}

} // namespace

BOOST_AUTO_TEST_CASE(fixed_policy_loses_nothing) {
  check_threshold_encoder(unclipped(threshold_policy(fixed_threshold_options{2e-2f})), "fixed");
}

BOOST_AUTO_TEST_CASE(adaptive_policy_loses_nothing) {
  check_threshold_encoder(unclipped(threshold_policy(adaptive_threshold_options{})), "adaptive");
}

BOOST_AUTO_TEST_CASE(target_sparsity_policy_loses_nothing) {
  check_threshold_encoder(unclipped(threshold_policy(target_sparsity_options{})), "target");
}

BOOST_AUTO_TEST_CASE(shake_ups_lose_nothing) {
  auto options = unclipped(threshold_policy(adaptive_threshold_options{}));
  options.shake_up_every = 7;
  check_threshold_encoder(options, "shake-up");
}

BOOST_AUTO_TEST_CASE(two_bit_encoder_loses_nothing) {
  for (std::size_t n : sizes) {
    two_bit_encoder encoder(n, two_bit_encoder_options{2e-3f});
    const auto book = run(n, 2000 + n, [&](const std::vector<float>& update, std::vector<float>& out) {
      const float before = max_abs(encoder.residual()) + max_abs(update) + encoder.threshold();
      const auto message = encoder.encode(update);
      BOOST_REQUIRE(decode_add(message.enc, message.threshold, message.payload, out).ok());
      return std::pair{std::optional<encoding>(message.enc), static_cast<double>(before)};
    });
    check(book, encoder.residual(), "two_bit n=" + std::to_string(n));
  }
}

BOOST_AUTO_TEST_CASE(clipping_discards_exactly_what_it_reports) {
  // With the default clipping, the totals still balance once the discarded sum is counted.
  auto options = unclipped(threshold_policy(adaptive_threshold_options{}));
  options.clip_every = threshold_encoder_options::default_clip_every;
  const std::size_t n = 8191;
  threshold_encoder encoder(n, options);
  double abs_discarded = 0.0;
  const auto book = run(n, 77, [&](const std::vector<float>& update, std::vector<float>& out) {
    const float before = max_abs(encoder.residual()) + max_abs(update) + encoder.threshold();
    const double clipped_before = encoder.clipped();
    const auto message = encoder.encode(update);
    abs_discarded += std::fabs(encoder.clipped() - clipped_before);
    std::optional<encoding> enc;
    if (message) {
      BOOST_REQUIRE(decode_add(message->enc, message->threshold, message->payload, out).ok());
      enc = message->enc;
    }
    return std::pair{enc, static_cast<double>(before)};
  });
  double sent_in = 0.0, decoded = 0.0, residual = 0.0, moved = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    sent_in += book.sent_in[i];
    decoded += book.decoded[i];
    residual += encoder.residual()[i];
    moved += std::fabs(book.sent_in[i]);
  }
  BOOST_TEST_MESSAGE("clipping discarded " << encoder.clipped() << " (signed), "
                     << abs_discarded << " per-iteration magnitude, of " << moved << " sent in");
  BOOST_TEST(abs_discarded > 0.0);  // this sequence does clip
  BOOST_TEST(std::fabs(decoded + residual + encoder.clipped() - sent_in) <=
             book.rounding_budget * static_cast<double>(n));
}
