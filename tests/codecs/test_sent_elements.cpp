#define BOOST_TEST_MODULE codecs_sent_elements
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "strom/compute/codecs/sent_elements.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "support/fixed_threshold.hpp"

using namespace strom::compute;
using strom::testing::fixed_unclipped;

namespace {

/// The elements an update changes, found by decoding it into zeros.
std::vector<bool> changed_by(const encoded_update& update) {
  std::vector<float> target(update.elements, 0.0f);
  BOOST_REQUIRE(decode_add(update.enc, update.threshold, update.payload, target).ok());
  std::vector<bool> changed(update.elements);
  for (std::size_t i = 0; i < target.size(); ++i) changed[i] = target[i] != 0.0f;
  return changed;
}

/// Clears `update`'s elements in a buffer of ones and checks that exactly those are 0.
void check_clears_exactly_the_changed(const encoded_update& update) {
  std::vector<float> momentum(update.elements, 1.0f);
  clear_sent_elements(update, momentum);
  const auto changed = changed_by(update);
  for (std::size_t i = 0; i < momentum.size(); ++i)
    BOOST_TEST((momentum[i] == 0.0f) == changed[i], "element " << i);
}

} // namespace

BOOST_AUTO_TEST_CASE(sparse_update_clears_its_indices_of_either_sign) {
  threshold_encoder encoder(100, fixed_unclipped(1.0f));
  std::vector<float> update(100, 0.0f);
  update[0] = 2.0f;
  update[41] = -1.5f;
  update[99] = 1.0f;
  update[7] = 0.5f;  // stays in the residual: its momentum stays too
  const auto message = encoder.encode(update);
  BOOST_REQUIRE(message.has_value());
  BOOST_REQUIRE(message->enc == encoding::threshold);
  std::vector<float> momentum(100, 1.0f);
  clear_sent_elements(*message, momentum);
  BOOST_TEST(momentum[0] == 0.0f);
  BOOST_TEST(momentum[41] == 0.0f);
  BOOST_TEST(momentum[99] == 0.0f);
  BOOST_TEST(momentum[7] == 1.0f);
  check_clears_exactly_the_changed(*message);
}

BOOST_AUTO_TEST_CASE(bitmap_update_clears_full_and_half_steps_but_not_the_padding) {
  // 37 elements: three bitmap words, the last one padded. Every other element is sent, some
  // as a half step (-threshold/2), which moves the receiver too.
  threshold_encoder encoder(37, fixed_unclipped(1.0f));
  std::vector<float> update(37, 0.0f);
  for (std::size_t i = 0; i < update.size(); i += 2) update[i] = i % 4 == 0 ? 1.0f : -0.6f;
  const auto message = encoder.encode(update);
  BOOST_REQUIRE(message.has_value());
  BOOST_REQUIRE(message->enc == encoding::bitmap);
  std::vector<float> momentum(37, 1.0f);
  clear_sent_elements(*message, momentum);
  for (std::size_t i = 0; i < momentum.size(); ++i)
    BOOST_TEST(momentum[i] == (i % 2 == 0 ? 0.0f : 1.0f), "element " << i);
  check_clears_exactly_the_changed(*message);
}

BOOST_AUTO_TEST_CASE(refuses_a_buffer_of_another_size_or_a_dense_update) {
  threshold_encoder encoder(16, fixed_unclipped(1.0f));
  const std::vector<float> update(16, 1.0f);
  const auto message = encoder.encode(update);
  BOOST_REQUIRE(message.has_value());
  std::vector<float> short_buffer(15, 1.0f);
  BOOST_CHECK_THROW(clear_sent_elements(*message, short_buffer), std::invalid_argument);
  std::vector<float> momentum(16, 1.0f);
  const encoded_update dense{encoding::dense_fp32, 0.0f, 16, 16, message->payload};
  BOOST_CHECK_THROW(clear_sent_elements(dense, momentum), std::invalid_argument);
  BOOST_TEST(momentum == std::vector<float>(16, 1.0f), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(refuses_an_index_outside_the_buffer) {
  const std::vector<std::int32_t> indices{3, -17};
  const encoded_update update{encoding::threshold, 1.0f, 16, 2,
                              std::as_bytes(std::span<const std::int32_t>(indices))};
  std::vector<float> momentum(16, 1.0f);
  BOOST_CHECK_THROW(clear_sent_elements(update, momentum), std::invalid_argument);
}
