#pragma once
// A small Fashion-MNIST job for tests that train for real: a 784-64-10 MLP, batches of 64,
// plain SGD; two epochs unless overridden. About a second per epoch and worker.

#include <string>

#include <boost/test/unit_test.hpp>

#include "strom/runtime/job/job_spec.hpp"

namespace strom::testing {

/// A job file's data section: Debian's Fashion-MNIST, `train_images` for the training
/// images, pixels scaled to [0, 1].
inline std::string fashion_mnist_data_text(
  const std::string& train_images = STROM_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz") {
  const std::string dir = STROM_FASHION_MNIST_DIR;
  return R"(data = (
    train = (idx = (images = ")" + train_images + R"(",
                    labels = ")" + dir + R"(/train-labels-idx1-ubyte.gz")),
    test = (idx = (images = ")" + dir + R"(/t10k-images-idx3-ubyte.gz",
                   labels = ")" + dir + R"(/t10k-labels-idx1-ubyte.gz")),
    preprocessing = (scale = 0.00392156862745098)
  ))";
}

/// A job file's data section that trains on Fashion-MNIST's 10,000 test images and tests on
/// them too: real data for a test that does not need a whole epoch of it (a sixth of the time).
inline std::string fashion_mnist_test_set_data_text() {
  const std::string dir = STROM_FASHION_MNIST_DIR;
  const std::string test = R"((idx = (images = ")" + dir + R"(/t10k-images-idx3-ubyte.gz",
                   labels = ")" + dir + R"(/t10k-labels-idx1-ubyte.gz")))";
  return "data = (train = " + test + ", test = " + test
         + ", preprocessing = (scale = 0.00392156862745098))";
}

/// The job's text; `train_images` replaces the training images path (to test a missing
/// file), `hidden_units` the hidden layer's width.
inline std::string small_fashion_job_text(
  const std::string& train_images = STROM_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz",
  unsigned hidden_units = 64) {
  return R"((
  name = "fashion_small",
  network = (
    input = (channels = 1, height = 28, width = 28),
    weightInit = he,
    layers = [(dense = (units = )" + std::to_string(hidden_units) + R"(, activation = relu)),
              (output = (units = 10, weightInit = xavier))]
  ),
  )" + fashion_mnist_data_text(train_images) + R"(,
  training = (epochs = 2, batchSize = 64, seed = 42, updater = (learningRate = 0.05, sgd = void))
))";
}

/// The job, parsed.
inline runtime::job_spec small_fashion_job(
  const std::string& train_images = STROM_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz",
  unsigned hidden_units = 64) {
  auto job = runtime::parse_job_text(small_fashion_job_text(train_images, hidden_units),
                                     "fashion_small.job", ".");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  return std::move(*job);
}

} // namespace strom::testing
