#define BOOST_TEST_MODULE data_batch_loader
#include <boost/test/unit_test.hpp>

#include <numeric>
#include <stdexcept>

#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/data/partition.hpp"

using namespace strom::compute;

namespace {

/// `n` samples of 3 features; sample i holds i*10, i*10+1, i*10+2 and label i.
dataset numbered(std::size_t n) {
  dataset data;
  data.sample_shape = {1, 1, 3};
  data.classes = n;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t f = 0; f < 3; ++f)
      data.features.push_back(static_cast<float>(i * 10 + f));
    data.labels.push_back(static_cast<std::int32_t>(i));
  }
  return data;
}

/// The labels of every batch of one epoch, checking each batch's features match its labels.
std::vector<std::int32_t> drain(batch_loader& loader, std::vector<std::size_t>* sizes = nullptr) {
  std::vector<std::int32_t> seen;
  while (const batch* b = loader.next()) {
    BOOST_REQUIRE(b->labels.size() == b->size);
    BOOST_REQUIRE(b->features.size() == b->size * 3);
    for (std::size_t i = 0; i < b->size; ++i) {
      const auto label = b->labels[i];
      for (std::size_t f = 0; f < 3; ++f)
        BOOST_REQUIRE(b->features[i * 3 + f] == static_cast<float>(label * 10 + f));
      seen.push_back(label);
    }
    if (sizes)
      sizes->push_back(b->size);
  }
  return seen;
}

std::vector<std::int32_t> as_labels(const std::vector<std::uint32_t>& order) {
  return {order.begin(), order.end()};
}

} // namespace

BOOST_AUTO_TEST_CASE(yields_every_sample_once_in_order) {
  const auto data = numbered(100);
  const auto order = epoch_order({0, 100}, 42, 0, true);
  batch_loader loader(data, order, 8);
  std::vector<std::size_t> sizes;
  BOOST_TEST(drain(loader, &sizes) == as_labels(order), boost::test_tools::per_element());
  BOOST_TEST(loader.batches_per_epoch() == 13u);
  BOOST_TEST(sizes.size() == 13u);
  BOOST_TEST(sizes.back() == 4u);
}

BOOST_AUTO_TEST_CASE(drop_last_skips_the_partial_batch) {
  const auto data = numbered(10);
  const auto order = epoch_order({0, 10}, 1, 0, false);
  batch_loader loader(data, order, 4, true);
  std::vector<std::size_t> sizes;
  const auto seen = drain(loader, &sizes);
  BOOST_TEST(sizes == (std::vector<std::size_t>{4, 4}), boost::test_tools::per_element());
  BOOST_TEST(seen == (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(next_after_the_end_keeps_returning_nullptr) {
  const auto data = numbered(3);
  batch_loader loader(data, {0, 1, 2}, 5);
  BOOST_TEST(loader.next() != nullptr);
  BOOST_TEST(loader.next() == nullptr);
  BOOST_TEST(loader.next() == nullptr);
}

BOOST_AUTO_TEST_CASE(empty_order_ends_at_once) {
  const auto data = numbered(3);
  batch_loader loader(data, {}, 2);
  BOOST_TEST(loader.next() == nullptr);
}

BOOST_AUTO_TEST_CASE(partition_share_is_served_from_the_full_dataset) {
  const auto data = numbered(50);
  const auto order = epoch_order(partition(50, 1, 3), 9, 0, true);
  batch_loader loader(data, order, 7);
  BOOST_TEST(drain(loader) == as_labels(order), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reset_starts_a_new_epoch_in_the_new_order) {
  const auto data = numbered(40);
  batch_loader loader(data, epoch_order({0, 40}, 5, 0, true), 6);
  for (std::uint32_t epoch = 1; epoch < 20; ++epoch) {
    const auto order = epoch_order({0, 40}, 5, epoch, true);
    loader.reset(order);
    BOOST_TEST(drain(loader) == as_labels(order), boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(reset_in_the_middle_of_an_epoch_discards_the_rest) {
  const auto data = numbered(40);
  batch_loader loader(data, epoch_order({0, 40}, 5, 0, false), 3);
  BOOST_REQUIRE(loader.next() != nullptr);
  BOOST_REQUIRE(loader.next() != nullptr);
  const auto order = epoch_order({0, 40}, 5, 1, true);
  loader.reset(order);
  BOOST_TEST(drain(loader) == as_labels(order), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(every_batch_of_every_epoch_reuses_one_buffer) {
  const auto data = numbered(64);
  batch_loader loader(data, epoch_order({0, 64}, 11, 0, false), 4);
  std::vector<const float*> buffers;
  for (int epoch = 0; epoch < 2000; ++epoch) {
    loader.reset(epoch_order({0, 64}, 11, static_cast<std::uint32_t>(epoch), true));
    while (const batch* b = loader.next()) {
      if (std::find(buffers.begin(), buffers.end(), b->features.data()) == buffers.end())
        buffers.push_back(b->features.data());
    }
  }
  BOOST_TEST(buffers.size() == 1u);
}

BOOST_AUTO_TEST_CASE(zero_batch_size_throws) {
  const auto data = numbered(3);
  BOOST_CHECK_THROW(batch_loader(data, {0, 1}, 0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(index_outside_the_dataset_throws) {
  const auto data = numbered(3);
  BOOST_CHECK_THROW(batch_loader(data, {0, 3}, 2), std::out_of_range);
  batch_loader loader(data, {0, 1}, 2);
  BOOST_CHECK_THROW(loader.reset({7}), std::out_of_range);
}
