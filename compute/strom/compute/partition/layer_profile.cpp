#include "strom/compute/partition/layer_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/compute/saturating.hpp"
#include "strom/compute/shape.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"

namespace strom::compute {

namespace {

/// Any seeds: profiling needs values of the right scale, not the job's own.
constexpr std::uint64_t profiling_seed = 0;

std::uint64_t float_bytes(std::uint64_t floats) { return saturating_mul(floats, sizeof(float)); }

/// Per-layer buffers the profiler runs the layers on: each layer's output and the gradient
/// flowing into it.
struct profiling_buffers {
  std::vector<std::vector<float>> outputs;
  std::vector<std::vector<float>> output_gradients;
  std::vector<float> input;
};

} // namespace

result<layer_costs> profile_layers(schema::Job::Reader job, const dataset& samples,
                                   const layer_profile_options& options) {
  if (!options.seconds_now)
    return error{"layer profile: no clock given"};
  if (options.batches == 0)
    return error{"layer profile: batches is 0, at least one batch must be timed"};
  auto training = job.getTraining();
  if (auto ok = check_training(training); !ok)
    return ok.err();
  auto rule = make_updater(training.getUpdater());
  if (!rule)
    return rule.err();
  auto made = make_model(job.getNetwork(), profiling_seed);
  if (!made)
    return made.err();
  model& net = **made;
  const std::size_t batch = options.batch_size > 0 ? options.batch_size : training.getBatchSize();
  const std::size_t sample_floats = net.input_shape().size();
  if (samples.sample_shape.size() != sample_floats)
    return error{fmt::format("layer profile: samples have {} floats each, network.input {}",
                             samples.sample_shape.size(), sample_floats)};
  if (samples.size() < batch)
    return error{fmt::format("layer profile: {} samples, fewer than a batch of {}",
                             samples.size(), batch)};
  net.initialize(profiling_seed);
  net.reserve(batch);

  const auto layers = net.layers();
  profiling_buffers buffers;
  for (const auto& l : layers) {
    buffers.outputs.emplace_back(batch * l->output_shape().size());
    // A small uniform loss gradient: backward's cost does not depend on its values.
    buffers.output_gradients.emplace_back(batch * l->output_shape().size(),
                                          1.0f / static_cast<float>(batch));
  }
  buffers.input.resize(batch * sample_floats);

  std::vector<double> seconds(layers.size(), 0.0);
  const std::size_t batches_in_samples = samples.size() / batch;
  for (std::uint32_t round = 0; round <= options.batches; ++round) {  // round 0: warm-up
    const std::size_t first = (round % batches_in_samples) * batch * sample_floats;
    std::copy_n(samples.features.begin() + static_cast<std::ptrdiff_t>(first),
                buffers.input.size(), buffers.input.begin());
    const bool timed = round > 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      std::span<const float> in = i == 0 ? std::span<const float>(buffers.input)
                                         : std::span<const float>(buffers.outputs[i - 1]);
      const double start = options.seconds_now();
      layers[i]->forward(in, buffers.outputs[i], batch, pass::training);
      if (timed)
        seconds[i] += options.seconds_now() - start;
    }
    for (std::size_t i = layers.size(); i-- > 0;) {
      std::span<const float> in = i == 0 ? std::span<const float>(buffers.input)
                                         : std::span<const float>(buffers.outputs[i - 1]);
      // The first layer's input gradient is not needed, as in model::compute_gradients.
      std::span<float> in_gradient =
        i == 0 ? std::span<float>() : std::span<float>(buffers.output_gradients[i - 1]);
      const double start = options.seconds_now();
      layers[i]->backward(in, buffers.outputs[i], buffers.output_gradients[i], in_gradient, batch);
      if (timed)
        seconds[i] += options.seconds_now() - start;
    }
    // Backward overwrote the gradients with values of no fixed scale; reset them so each
    // round runs on the same kind of numbers.
    for (auto& g : buffers.output_gradients)
      std::fill(g.begin(), g.end(), 1.0f / static_cast<float>(batch));
  }

  layer_costs costs;
  costs.input_bytes_per_sample = float_bytes(sample_floats);
  const double timed_samples = static_cast<double>(options.batches) * static_cast<double>(batch);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& l = *layers[i];
    layer_cost cost;
    cost.kind = l.kind();
    cost.seconds_per_sample = seconds[i] / timed_samples;
    cost.activation_bytes_per_sample = float_bytes(l.output_shape().size());
    cost.parameter_bytes = float_bytes(l.parameter_count());
    cost.gradient_bytes = float_bytes(l.parameter_count());
    cost.model_state_bytes = float_bytes(l.state_count());
    cost.updater_state_bytes = float_bytes((*rule)->state_size(l.parameter_count()));
    costs.layers.push_back(std::move(cost));
  }
  return costs;
}

} // namespace strom::compute
