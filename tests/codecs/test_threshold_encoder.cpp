#define BOOST_TEST_MODULE codecs_threshold_encoder
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "support/fixed_threshold.hpp"

using namespace strom::compute;
using strom::testing::fixed_unclipped;

namespace {

// An update of `hits` ones spread over the buffer.
std::vector<float> ones(std::size_t elements, std::size_t hits) {
  std::vector<float> update(elements, 0.0f);
  for (std::size_t k = 0; k < hits; ++k) update[k * (elements / hits)] = 1.0f;
  return update;
}

std::vector<float> decoded(const encoded_update& message) {
  std::vector<float> target(message.elements, 0.0f);
  BOOST_REQUIRE(decode_add(message.enc, message.threshold, message.payload, target).ok());
  return target;
}

} // namespace

BOOST_AUTO_TEST_CASE(fewer_than_two_values_send_no_message) {
  threshold_encoder encoder(64, fixed_unclipped(1.0f));
  std::vector<float> update(64, 0.0f);
  update[3] = 1.5f;
  BOOST_TEST(!encoder.encode(update).has_value());
  BOOST_TEST(encoder.residual()[3] == 1.5f);  // kept, not lost
  BOOST_TEST(encoder.last_density() == 1.0 / 64.0);
  update[3] = 0.0f;
  update[9] = -1.0f;
  const auto message = encoder.encode(update);
  BOOST_REQUIRE(message.has_value());
  BOOST_TEST(message->values == 2u);
  std::vector<std::int32_t> indices(2);
  std::memcpy(indices.data(), message->payload.data(), 8);
  BOOST_TEST(indices == (std::vector<std::int32_t>{4, -10}), boost::test_tools::per_element());
  BOOST_TEST(encoder.residual()[3] == 0.5f);
  BOOST_TEST(encoder.residual()[9] == 0.0f);
  BOOST_TEST(encoder.iteration() == 2u);
}

BOOST_AUTO_TEST_CASE(sparse_up_to_n_over_16_entries) {
  threshold_encoder encoder(1600, fixed_unclipped(1.0f));
  BOOST_TEST(encoder.sparse_capacity() == 100u);
  const auto message = encoder.encode(ones(1600, 100));
  BOOST_REQUIRE(message.has_value());
  BOOST_TEST(static_cast<int>(message->enc) == static_cast<int>(encoding::threshold));
  BOOST_TEST(message->payload.size() == 400u);
  BOOST_TEST(decoded(*message) == ones(1600, 100), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bitmap_beyond_n_over_16_entries) {
  threshold_encoder encoder(1600, fixed_unclipped(1.0f));
  const auto message = encoder.encode(ones(1600, 101));
  BOOST_REQUIRE(message.has_value());
  BOOST_TEST(static_cast<int>(message->enc) == static_cast<int>(encoding::bitmap));
  BOOST_TEST(message->payload.size() == 400u);
  BOOST_TEST(message->values == 101u);
  BOOST_TEST(decoded(*message) == ones(1600, 101), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bitmap_mode_holds_until_a_fifth_of_n_over_16_then_switches_back) {
  threshold_encoder encoder(1600, fixed_unclipped(1.0f));
  const auto expect = [&](std::size_t hits, encoding enc) {
    const auto message = encoder.encode(ones(1600, hits));
    BOOST_REQUIRE(message.has_value());
    BOOST_TEST(static_cast<int>(message->enc) == static_cast<int>(enc), "hits " << hits);
    BOOST_TEST(decoded(*message) == ones(1600, hits), boost::test_tools::per_element());
  };
  expect(101, encoding::bitmap);
  expect(50, encoding::bitmap);     // would fit sparse, but bitmap mode holds
  expect(20, encoding::bitmap);     // N/16/5 = 20 still holds
  expect(19, encoding::threshold);  // few values: back to sparse
  expect(50, encoding::threshold);  // sparse mode holds up to N/16
  expect(100, encoding::threshold);
  expect(101, encoding::bitmap);
}

BOOST_AUTO_TEST_CASE(encoder_follows_its_policy) {
  threshold_encoder_options options;
  options.clip_every = 0;
  threshold_encoder encoder(1000, options);  // adaptive, DL4J defaults
  BOOST_TEST(encoder.threshold() == 1e-4f);
  std::vector<float> quiet(1000, 0.0f);
  BOOST_TEST(!encoder.encode(quiet).has_value());  // sparsity 0 < 1e-4: shrink
  BOOST_TEST(encoder.threshold() < 1e-4f);
  std::vector<float> loud(1000, 1.0f);
  const auto message = encoder.encode(loud);       // density 1 > 1e-2: grow back
  BOOST_REQUIRE(message.has_value());
  BOOST_TEST(encoder.last_density() == 1.0);
  BOOST_TEST(encoder.threshold() == 1e-4f, boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(residual_is_clipped_to_five_thresholds_every_fifth_iteration) {
  threshold_encoder_options options = fixed_unclipped(1.0f);
  options.clip_every = threshold_encoder_options::default_clip_every;
  threshold_encoder encoder(64, options);
  std::vector<float> update(64, 0.0f);
  update[0] = 100.0f;
  update[1] = -100.0f;
  BOOST_REQUIRE(encoder.encode(update).has_value());  // one step each: 99, -99
  const std::vector<float> zero(64, 0.0f);
  for (int k = 0; k < 3; ++k) BOOST_REQUIRE(encoder.encode(zero).has_value());
  BOOST_TEST(encoder.residual()[0] == 96.0f);  // no clipping before iteration 5
  BOOST_TEST(encoder.clipped() == 0.0);
  BOOST_REQUIRE(encoder.encode(zero).has_value());
  BOOST_TEST(encoder.residual()[0] == 5.0f);
  BOOST_TEST(encoder.residual()[1] == -5.0f);
  BOOST_TEST(encoder.clipped() == 0.0);  // +90 and -90 cancel in the signed sum
  update[1] = 100.0f;
  for (int k = 0; k < 5; ++k) encoder.encode(k == 0 ? update : zero);
  // Element 0: 5 + 100 - 5 steps = 100, clipped to 5; element 1: -5 + 100 - 5 = 90 -> 5.
  BOOST_TEST(encoder.clipped() == 95.0 + 85.0);
}

BOOST_AUTO_TEST_CASE(replica_given_as_also_stays_what_was_sent_plus_the_residual) {
  // A worker that applies its own update at once passes its replica as `also`: it must hold
  // exactly what the other replicas were sent plus the residual, clipping included, so the
  // replicas never drift further apart than the clip bound.
  threshold_encoder_options options = fixed_unclipped(1.0f);
  options.clip_every = threshold_encoder_options::default_clip_every;
  threshold_encoder encoder(64, options);
  std::vector<float> replica(64, 3.0f);
  std::vector<float> others(64, 3.0f);  // a replica that only applies the messages
  const float steps[] = {0.0f, 0.5f, -0.75f, 3.0f, -12.0f};
  std::vector<float> update(64);
  for (std::size_t k = 0; k < 12; ++k) {
    for (std::size_t i = 0; i < update.size(); ++i) update[i] = steps[(i * 7 + k * 3) % 5];
    if (const auto message = encoder.encode(update, -1.0f, replica))
      BOOST_REQUIRE(decode_add(message->enc, message->threshold, message->payload, others).ok());
    for (std::size_t i = 0; i < replica.size(); ++i)
      BOOST_TEST(replica[i] == others[i] + encoder.residual()[i],
                 "element " << i << ", step " << k);
  }
  BOOST_TEST(encoder.clipped() != 0.0);
}

BOOST_AUTO_TEST_CASE(clipping_after_a_sparse_step_equals_clipping_the_whole_residual) {
  // After a sparse step the encoder clips only the elements that reached the threshold; the
  // others are below it, hence within the bound. Checked against scan, commit and a clip of
  // every element, on a sequence that does clip.
  const float threshold = 1.0f;
  threshold_encoder_options options = fixed_unclipped(threshold);
  options.clip_every = 2;
  options.clip_factor = 1.5f;
  const std::size_t n = 1000;
  threshold_encoder encoder(n, options);
  std::vector<float> replica(n, 0.0f);
  std::vector<float> reference_residual(n, 0.0f);
  std::vector<float> reference_replica(n, 0.0f);
  std::vector<std::int32_t> indices(n);
  double reference_clipped = 0.0;
  std::vector<float> update(n, 0.0f);
  for (std::size_t k = 1; k <= 40; ++k) {
    // A few large values on rotating elements (sparse steps), small ones everywhere else.
    const float big[] = {2.5f, -3.5f, 5.0f, -6.0f};
    for (std::size_t i = 0; i < n; ++i)
      update[i] = (i + 3 * k) % 97 == 0 ? big[k % 4]
                                         : 0.002f * static_cast<float>((i * k) % 7) - 0.006f;
    const auto message = encoder.encode(update, -1.0f, replica);
    BOOST_REQUIRE(message.has_value());
    BOOST_REQUIRE(message->enc == encoding::threshold);
    const auto hits =
      threshold_scan(reference_residual, update, threshold, indices, -1.0f, reference_replica);
    threshold_commit(reference_residual, std::span(indices).first(hits), threshold);
    if (k % options.clip_every == 0)
      reference_clipped +=
        clip_to_bound(reference_residual, options.clip_factor * threshold, reference_replica)
          .removed;
    BOOST_REQUIRE(std::ranges::equal(encoder.residual(), reference_residual));
    BOOST_REQUIRE(std::ranges::equal(replica, reference_replica));
  }
  BOOST_TEST(reference_clipped != 0.0);
  // The whole-residual clip sums in float lanes; the listed one in double.
  BOOST_TEST(encoder.clipped() == reference_clipped, boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(shake_up_sends_a_bitmap_at_a_third_of_the_threshold) {
  threshold_encoder_options options = fixed_unclipped(0.9f);
  options.shake_up_every = 3;
  threshold_encoder encoder(32, options);
  std::vector<float> update(32, 0.0f);
  update[0] = 0.5f;
  update[1] = 0.5f;
  update[2] = -0.4f;
  BOOST_TEST(!encoder.encode(update).has_value());
  const std::vector<float> zero(32, 0.0f);
  BOOST_TEST(!encoder.encode(zero).has_value());
  const auto message = encoder.encode(zero);
  BOOST_REQUIRE(message.has_value());
  BOOST_TEST(static_cast<int>(message->enc) == static_cast<int>(encoding::bitmap));
  BOOST_TEST(message->threshold == 0.9f / 3.0f);
  BOOST_TEST(message->values == 3u);
  const auto sent = decoded(*message);
  for (std::size_t i = 0; i < 3; ++i)
    BOOST_TEST(sent[i] + encoder.residual()[i] == update[i], boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(encoder.threshold() == 0.9f);  // the shake-up does not steer the policy
}

BOOST_AUTO_TEST_CASE(shake_up_is_off_by_default) {
  BOOST_TEST(threshold_encoder_options{}.shake_up_every == 0u);
}

BOOST_AUTO_TEST_CASE(update_of_wrong_size_throws) {
  threshold_encoder encoder(10, fixed_unclipped(1.0f));
  const std::vector<float> update(11, 0.0f);
  BOOST_CHECK_THROW(encoder.encode(update), std::invalid_argument);
}
