#pragma once
// A trained model to use in a host program: a checkpoint that `strom train` saved, loaded
// into its job's network, predicting on the host's own buffers. Samples are given as the
// job's data files hold them (pixels 0-255 for Fashion-MNIST's IDX files); the job's
// preprocessing is applied to a copy, as it was to the training data.
//
//   auto model = strom::runtime::trained_model::load("checkpoints/fashion_mlp/run-1/best.ckpt");
//   auto classes = model->classify(pixels, count);  // count * model->features() floats

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/model.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/checkpoint.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::runtime {

/// A checkpoint's network, ready to predict.
class trained_model {
public:
  /// Loads the checkpoint at `path` into a network built from its job; a damaged, truncated
  /// or foreign file is refused (load_checkpoint), and errors name the path.
  static result<trained_model> load(const std::string& path);

  trained_model(trained_model&&) noexcept;
  trained_model& operator=(trained_model&&) noexcept;
  ~trained_model();

  // -- properties --------------------------------------------------------------------------

  std::size_t features() const noexcept;  ///< floats a sample
  std::size_t classes() const noexcept;
  const job_spec& job() const noexcept;   ///< the job it was trained by
  const checkpoint_progress& progress() const noexcept;  ///< how far training got
  compute::model& net() noexcept;         ///< the network, for evaluation

  // -- use ---------------------------------------------------------------------------------

  /// Applies the job's preprocessing to `data` in place (its scale, and standardisation with
  /// its training set's statistics, read on first use).
  result<void> preprocess(compute::dataset& data);

  /// The class probabilities of `count` samples (count * features() floats, as the job's data
  /// files hold them): count * classes() floats, sample-major.
  result<std::vector<float>> predict(std::span<const float> samples, std::size_t count);

  /// The likeliest class of each of `count` samples.
  result<std::vector<std::uint32_t>> classify(std::span<const float> samples, std::size_t count);

private:
  struct state;
  explicit trained_model(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

/// The class with the largest of `scores` (one sample's probabilities or logits).
std::uint32_t likeliest_class(std::span<const float> scores);

} // namespace strom::runtime
