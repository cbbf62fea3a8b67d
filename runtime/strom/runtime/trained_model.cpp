#include "strom/runtime/trained_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_preprocessing.hpp"

namespace strom::runtime {

struct trained_model::state {
  checkpoint_contents saved;
  std::unique_ptr<compute::replica> replica;
  std::optional<job_preprocessing> preprocessing;  ///< made on first use
};

trained_model::trained_model(std::unique_ptr<state> s) : state_(std::move(s)) {}
trained_model::trained_model(trained_model&&) noexcept = default;
trained_model& trained_model::operator=(trained_model&&) noexcept = default;
trained_model::~trained_model() = default;

result<trained_model> trained_model::load(const std::string& path) {
  auto saved = load_checkpoint(path);
  if (!saved)
    return saved.err();
  auto built = compute::make_replica(saved->job.reader(), 0);
  if (!built)
    return error{fmt::format("{}: job in checkpoint: {}", path, built.err().message)};
  if (auto ok = restore_checkpoint(*saved, **built); !ok)
    return error{fmt::format("{}: {}", path, ok.err().message)};
  return trained_model{std::make_unique<state>(state{std::move(*saved), std::move(*built), {}})};
}

std::size_t trained_model::features() const noexcept {
  return state_->replica->net().input_shape().size();
}

std::size_t trained_model::classes() const noexcept { return state_->replica->net().classes(); }

const job_spec& trained_model::job() const noexcept { return state_->saved.job; }

const checkpoint_progress& trained_model::progress() const noexcept {
  return state_->saved.progress;
}

compute::model& trained_model::net() noexcept { return state_->replica->net(); }

result<void> trained_model::preprocess(compute::dataset& data) {
  if (!state_->preprocessing) {
    auto made = job_preprocessing::of(state_->saved.job);
    if (!made)
      return made.err();
    state_->preprocessing = std::move(*made);
  }
  state_->preprocessing->apply(data);
  return success();
}

result<std::vector<float>> trained_model::predict(std::span<const float> samples,
                                                  std::size_t count) {
  const auto width = features();
  if (samples.size() != count * width)
    return error{fmt::format("predict: {} floats for {} samples of {} features, expected {}",
                             samples.size(), count, width, count * width)};
  compute::dataset data;
  data.sample_shape = net().input_shape();
  data.features.assign(samples.begin(), samples.end());
  data.labels.assign(count, 0);
  if (auto ok = preprocess(data); !ok)
    return ok.err();
  auto& network = net();
  const auto k = classes();
  const std::size_t step = std::max<std::size_t>(1, network.max_batch());
  network.reserve(step);
  std::vector<float> probabilities(count * k);
  for (std::size_t begin = 0; begin < count; begin += step) {
    const std::size_t batch = std::min(step, count - begin);
    const auto logits =
      network.predict(std::span{data.features}.subspan(begin * width, batch * width), batch);
    // Softmax of each row, its largest logit subtracted first so nothing overflows.
    for (std::size_t i = 0; i < batch; ++i) {
      const auto row = logits.subspan(i * k, k);
      const float top = *std::max_element(row.begin(), row.end());
      const auto out = std::span{probabilities}.subspan((begin + i) * k, k);
      double sum = 0.0;
      for (std::size_t c = 0; c < k; ++c)
        sum += out[c] = std::exp(row[c] - top);
      for (auto& p : out)
        p = static_cast<float>(p / sum);
    }
  }
  return probabilities;
}

result<std::vector<std::uint32_t>> trained_model::classify(std::span<const float> samples,
                                                           std::size_t count) {
  auto probabilities = predict(samples, count);
  if (!probabilities)
    return probabilities.err();
  const auto k = classes();
  std::vector<std::uint32_t> classes_of(count);
  for (std::size_t i = 0; i < count; ++i)
    classes_of[i] = likeliest_class(std::span{*probabilities}.subspan(i * k, k));
  return classes_of;
}

std::uint32_t likeliest_class(std::span<const float> scores) {
  return static_cast<std::uint32_t>(std::max_element(scores.begin(), scores.end())
                                    - scores.begin());
}

} // namespace strom::runtime
