// A host program that brings its own model and uses strom only as parameter servers, the way
// MXNet programs use kv.push and kv.pull: softmax regression on Fashion-MNIST, written here
// in plain C++, trained by W worker threads, each with its own strom::kv_client. Every step a
// worker pushes its batch's gradients and pulls the parameters back; the store merges the
// pushes of all workers (dist_sync) and runs Adam on the server.
//   strom_kvstore [--epochs N] [--workers W] [--servers S] [--data DIR]
// Prints each epoch's test accuracy, then "accuracy A" (0..1); exits 1 with the message on
// any error.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <mutex>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include <strom/compute/data/idx_reader.hpp>
#include <strom/strom.hpp>

namespace {

constexpr std::size_t pixels = 28 * 28;
constexpr std::size_t classes = 10;
constexpr std::size_t batch_size = 64;

/// Seeds each worker's shuffle (plus its rank): runs repeat, workers differ.
constexpr std::uint32_t shuffle_seed = 1234;

/// The model's keys in the store: one per parameter array, as MXNet names them.
constexpr std::uint32_t weights_key = 0;  ///< classes x pixels, row-major
constexpr std::uint32_t biases_key = 1;   ///< classes

/// Adam at 2e-3 on the server: one epoch of 2 workers reaches 0.8203, five 0.8378 (softmax
/// regression ends near 0.84 on Fashion-MNIST).
constexpr const char* server_updater = "(learningRate = 0.002, adam = ())";

/// Command line.
struct arguments {
  unsigned long epochs = 1;
  unsigned long workers = 2;
  unsigned long servers = 1;
  std::string data = "/usr/share/datasets/fashion-mnist";
};

/// Largest value accepted for a count; more is surely a typo.
constexpr unsigned long max_count = 1024;

/// Reads a count from 1 to max_count; false (with a message on stderr) otherwise.
bool parse_count(const char* option, const char* text, unsigned long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoul(text, &end, 10);
  if (errno == 0 && end != text && *end == '\0' && out > 0 && out <= max_count)
    return true;
  std::fprintf(stderr, "strom_kvstore: %s: expected 1 to %lu, found '%s'\n", option, max_count,
               text);
  return false;
}

/// Parses the command line; returns false (with a message on stderr) when it is wrong.
bool parse(int argc, char** argv, arguments& out) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: strom_kvstore [--epochs N] [--workers W] [--servers S] "
                           "[--data DIR]\n");
      return false;
    }
    if (arg == "--data") {
      out.data = argv[++i];
    } else if (arg == "--epochs" || arg == "--workers" || arg == "--servers") {
      auto& count = arg == "--epochs" ? out.epochs : arg == "--workers" ? out.workers : out.servers;
      if (!parse_count(argv[i], argv[i + 1], count))
        return false;
      ++i;
    } else {
      std::fprintf(stderr, "strom_kvstore: unexpected argument '%s'\n", arg.c_str());
      return false;
    }
  }
  return true;
}

/// A dataset with pixels scaled to [0, 1].
strom::compute::dataset load(const std::string& dir, const std::string& prefix) {
  auto data = strom::compute::read_idx(dir + "/" + prefix + "-images-idx3-ubyte.gz",
                                       dir + "/" + prefix + "-labels-idx1-ubyte.gz");
  if (!data)
    throw std::runtime_error(data.err().message);
  if (data->sample_shape.size() != pixels || data->classes > classes)
    throw std::runtime_error(dir + ": not Fashion-MNIST (28x28 images, 10 classes)");
  for (auto& value : data->features)
    value /= 255.0f;
  return std::move(*data);
}

/// The model: softmax(weights x + biases).
struct softmax_regression {
  std::vector<float> weights = std::vector<float>(classes * pixels, 0.0f);
  std::vector<float> biases = std::vector<float>(classes, 0.0f);

  /// The class probabilities of one image.
  void predict(std::span<const float> image, std::span<float> probabilities) const {
    for (std::size_t c = 0; c < classes; ++c)
      probabilities[c] = biases[c] + std::inner_product(image.begin(), image.end(),
                                                        weights.begin() + c * pixels, 0.0f);
    const float top = *std::max_element(probabilities.begin(), probabilities.end());
    float sum = 0.0f;
    for (auto& p : probabilities)
      sum += p = std::exp(p - top);
    for (auto& p : probabilities)
      p /= sum;
  }

  /// The mean cross-entropy gradient of the samples `batch` of `data`, into the two buffers.
  void gradient(const strom::compute::dataset& data, std::span<const std::size_t> batch,
                std::vector<float>& weight_grad, std::vector<float>& bias_grad) const {
    std::fill(weight_grad.begin(), weight_grad.end(), 0.0f);
    std::fill(bias_grad.begin(), bias_grad.end(), 0.0f);
    std::vector<float> p(classes);
    const float scale = 1.0f / static_cast<float>(batch.size());
    for (const auto index : batch) {
      const auto image = data.sample(index);
      predict(image, p);
      p[static_cast<std::size_t>(data.labels[index])] -= 1.0f;
      for (std::size_t c = 0; c < classes; ++c) {
        const float delta = p[c] * scale;
        bias_grad[c] += delta;
        float* row = weight_grad.data() + c * pixels;
        for (std::size_t i = 0; i < pixels; ++i)
          row[i] += delta * image[i];
      }
    }
  }

  /// The share of `data` classified right.
  double accuracy(const strom::compute::dataset& data) const {
    std::vector<float> p(classes);
    std::size_t right = 0;
    for (std::size_t i = 0; i < data.size(); ++i) {
      predict(data.sample(i), p);
      const auto guess = std::max_element(p.begin(), p.end()) - p.begin();
      right += guess == data.labels[i] ? 1 : 0;
    }
    return static_cast<double>(right) / static_cast<double>(data.size());
  }
};

/// One worker: its share of the training set (every W-th sample from `rank`), shuffled each
/// epoch; the same number of steps on every worker, as dist_sync needs. Rank 0 measures the
/// test accuracy after each epoch into `accuracy`.
void train_worker(strom::kv_client kv, std::uint32_t workers, const arguments& args,
                  const strom::compute::dataset& train, const strom::compute::dataset& test,
                  double& accuracy) {
  softmax_regression model;
  // Every rank inits every key with the same values; the first init counts (MXNet's usage).
  kv.init(weights_key, model.weights).get();
  kv.init(biases_key, model.biases).get();
  std::vector<std::size_t> mine;
  for (std::size_t i = kv.rank(); i < train.size(); i += workers)
    mine.push_back(i);
  const std::size_t steps = train.size() / workers / batch_size;
  std::mt19937 shuffle{shuffle_seed + kv.rank()};
  std::vector<float> weight_grad(model.weights.size());
  std::vector<float> bias_grad(model.biases.size());
  for (unsigned long epoch = 1; epoch <= args.epochs; ++epoch) {
    std::shuffle(mine.begin(), mine.end(), shuffle);
    for (std::size_t step = 0; step < steps; ++step) {
      model.gradient(train, std::span{mine}.subspan(step * batch_size, batch_size), weight_grad,
                     bias_grad);
      // All four calls go out at once; the pulls run after the pushes of their key.
      std::future<void> calls[] = {kv.push(weights_key, weight_grad),
                                   kv.push(biases_key, bias_grad),
                                   kv.pull(weights_key, model.weights),
                                   kv.pull(biases_key, model.biases)};
      for (auto& call : calls)
        call.get();
    }
    if (kv.rank() == 0) {
      accuracy = model.accuracy(test);
      std::printf("epoch %lu/%lu: test accuracy %.4f\n", epoch, args.epochs, accuracy);
      std::fflush(stdout);
    }
  }
}

int run(const arguments& args) {
  const auto train = load(args.data, "train");
  const auto test = load(args.data, "t10k");

  // The host's own actor system; strom's types must be registered before it is created.
  caf::actor_system_config config;
  strom::runtime::configure_for_strom(config);
  caf::actor_system system{config};

  strom::kv_store_options options;
  options.servers = static_cast<std::uint32_t>(args.servers);
  options.workers = static_cast<std::uint32_t>(args.workers);
  options.updater = server_updater;
  strom::kv_store store{system, options};

  double accuracy = 0.0;
  std::mutex failure_mutex;
  std::string failure;
  std::vector<std::thread> workers;
  for (std::uint32_t rank = 0; rank < options.workers; ++rank)
    workers.emplace_back([&, kv = store.client(rank)]() mutable {
      try {
        train_worker(std::move(kv), options.workers, args, train, test, accuracy);
      } catch (const std::exception& e) {
        std::lock_guard lock{failure_mutex};
        if (failure.empty())
          failure = e.what();
      }
    });
  for (auto& worker : workers)
    worker.join();
  if (!failure.empty()) {
    std::fprintf(stderr, "strom_kvstore: %s\n", failure.c_str());
    return 1;
  }
  std::printf("accuracy %.4f\n", accuracy);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  arguments args;
  if (!parse(argc, argv, args))
    return 1;
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strom_kvstore: %s\n", e.what());
    return 1;
  }
}
