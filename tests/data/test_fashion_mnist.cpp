#define BOOST_TEST_MODULE data_fashion_mnist
#include <boost/test/unit_test.hpp>

#include <array>
#include <chrono>

#include "fixtures.hpp"
#include "strom/compute/data/idx_reader.hpp"

using namespace strom::compute;

namespace {

const std::string dir = STROM_FASHION_MNIST_DIR;

/// Fashion-MNIST is balanced: every one of the 10 classes has the same number of samples.
void check_balanced(const dataset& data, std::size_t per_class) {
  std::array<std::size_t, 10> histogram{};
  for (auto label : data.labels)
    ++histogram.at(static_cast<std::size_t>(label));
  for (std::size_t c = 0; c < histogram.size(); ++c)
    BOOST_TEST(histogram[c] == per_class, "class " << c);
}

void check_pixels(const dataset& data) {
  float low = 255, high = 0;
  for (float x : data.features) {
    low = std::min(low, x);
    high = std::max(high, x);
  }
  BOOST_TEST(low == 0.0f);
  BOOST_TEST(high == 255.0f);
}

} // namespace

BOOST_AUTO_TEST_CASE(reads_the_training_set) {
  const auto start = std::chrono::steady_clock::now();
  auto data = read_idx(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz");
  const auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now()
                                                                 - start);
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST_MESSAGE("read 60000 training images in " << elapsed.count() << " ms");
  BOOST_TEST(data->size() == 60000u);
  BOOST_TEST((data->sample_shape == shape{1, 28, 28}));
  BOOST_TEST(data->classes == 10u);
  BOOST_TEST(data->features.size() == 60000u * 28 * 28);
  check_balanced(*data, 6000);
  check_pixels(*data);
}

BOOST_AUTO_TEST_CASE(reads_the_test_set) {
  auto data = read_idx(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->size() == 10000u);
  BOOST_TEST((data->sample_shape == shape{1, 28, 28}));
  BOOST_TEST(data->classes == 10u);
  check_balanced(*data, 1000);
  check_pixels(*data);
}
