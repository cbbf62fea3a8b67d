#include "strom/compute/model.hpp"

#include <algorithm>
#include <stdexcept>

#include "strom/compute/layers/softmax_cross_entropy.hpp"
#include "strom/compute/saturating.hpp"

namespace strom::compute {

std::size_t batch_memory_bytes(shape input, std::span<const std::unique_ptr<layer>> layers,
                               std::size_t max_batch) {
  // Mirrors model::reserve; tests/compute/test_memory_estimate.cpp pins the two together.
  std::size_t widest = input.size();
  std::size_t floats = 0;
  std::size_t workspaces = 0;
  for (const auto& l : layers) {
    const auto out = l->output_shape().size();
    widest = std::max(widest, out);
    floats = saturating_add(floats, saturating_mul(out, max_batch));
    workspaces = saturating_add(workspaces, l->workspace_bytes(max_batch));
  }
  floats = saturating_add(floats, saturating_mul(2 * widest, max_batch));  // delta_a_, delta_b_
  return saturating_add(saturating_mul(floats, sizeof(float)), workspaces);
}

model::model(shape input, std::vector<std::unique_ptr<layer>> layers, std::size_t classes)
  : input_(input), classes_(classes), layers_(std::move(layers)) {
  if (layers_.empty() || layers_.back()->output_shape().size() != classes_)
    throw std::invalid_argument("model: the last layer must produce one logit per class");
  std::size_t parameter_offset = 0;
  std::size_t state_offset = 0;
  for (const auto& l : layers_) {
    layer_slice slice{parameter_offset, l->parameter_count(), state_offset, l->state_count()};
    auto range = l->regularized_range();
    if (range.end > range.begin)
      regularized_.push_back({parameter_offset + range.begin, parameter_offset + range.end});
    parameter_offset += slice.parameter_count;
    state_offset += slice.state_count;
    slices_.push_back(slice);
  }
  parameters_.assign(parameter_offset, 0.0f);
  gradients_.assign(parameter_offset, 0.0f);
  state_.assign(state_offset, 0.0f);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const auto& s = slices_[i];
    layers_[i]->bind(std::span{parameters_}.subspan(s.parameter_offset, s.parameter_count),
                     std::span{gradients_}.subspan(s.parameter_offset, s.parameter_count),
                     std::span{state_}.subspan(s.state_offset, s.state_count));
  }
}

void model::initialize(std::uint64_t seed, std::size_t first_layer) {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    // One stream per layer: inserting a layer does not reshuffle the others' initial values.
    rng gen{derive_seed(seed, first_layer + i)};
    const auto& s = slices_[i];
    layers_[i]->initialize(std::span{parameters_}.subspan(s.parameter_offset, s.parameter_count),
                           std::span{state_}.subspan(s.state_offset, s.state_count), gen);
  }
}

void model::reserve(std::size_t max_batch) {
  if (max_batch <= max_batch_)
    return;
  max_batch_ = max_batch;
  activations_.resize(layers_.size());
  std::size_t widest = input_.size();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const auto out = layers_[i]->output_shape().size();
    widest = std::max(widest, out);
    activations_[i].assign(out * max_batch, 0.0f);
    layers_[i]->reserve(max_batch);
  }
  delta_a_.assign(widest * max_batch, 0.0f);
  delta_b_.assign(widest * max_batch, 0.0f);
}

std::span<float> model::activation_rows(std::size_t i, std::size_t first_row,
                                         std::size_t batch) {
  const auto width = layers_[i]->output_shape().size();
  return std::span{activations_[i]}.subspan(first_row * width, batch * width);
}

std::span<const float> model::forward(std::span<const float> features, std::size_t first_row,
                                      std::size_t batch, pass mode) {
  if (first_row > max_batch_ || batch > max_batch_ - first_row)
    throw std::invalid_argument("model: batch larger than the reserved maximum");
  std::span<const float> input = features.first(batch * input_.size());
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    auto output = activation_rows(i, first_row, batch);
    layers_[i]->forward(input, output, {first_row, batch}, mode);
    input = output;
  }
  return input;
}

float model::compute_gradients(std::span<const float> features,
                               std::span<const std::int32_t> labels, std::size_t batch,
                               const gradients_ready& ready) {
  auto logits = forward(features, 0, batch, pass::training);
  auto delta = std::span{delta_a_}.first(batch * classes_);
  const float loss = softmax_cross_entropy(logits, labels.first(batch), batch, classes_, delta);
  backward_rows(features, 0, batch, delta, {}, ready);
  return loss;
}

std::span<const float> model::forward_rows(std::span<const float> input, std::size_t first_row,
                                           std::size_t batch) {
  return forward(input, first_row, batch, pass::training);
}

void model::backward_rows(std::span<const float> input, std::size_t first_row,
                          std::size_t batch, std::span<const float> output_gradient,
                          std::span<float> input_gradient, const gradients_ready& ready) {
  // Each layer's input gradient is the next one down's output gradient; two buffers take
  // turns, the first being delta_b_ because compute_gradients passes delta_a_ in.
  std::span<const float> delta = output_gradient;
  bool into_b = true;
  for (std::size_t i = layers_.size(); i-- > 0;) {
    std::span<const float> layer_input =
      i == 0 ? input.first(batch * input_.size()) : activation_rows(i - 1, first_row, batch);
    std::span<float> layer_input_gradient =
      i == 0 ? (input_gradient.empty() ? std::span<float>{}
                                       : input_gradient.first(batch * input_.size()))
             : std::span{into_b ? delta_b_ : delta_a_}.first(
                 batch * layers_[i - 1]->output_shape().size());
    layers_[i]->backward(layer_input, activation_rows(i, first_row, batch), delta,
                         layer_input_gradient, {first_row, batch});
    if (ready)
      ready(slices_[i].parameter_offset);
    delta = layer_input_gradient;
    into_b = !into_b;
  }
}

std::span<const float> model::predict(std::span<const float> features, std::size_t batch) {
  return forward(features, 0, batch, pass::inference);
}

} // namespace strom::compute
