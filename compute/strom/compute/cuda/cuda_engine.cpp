// The CUDA backend's engine (device/device_engine.hpp): the model's layers as device layers
// over three flat device buffers of the host layout, the loss, the backward pass, L2 and the
// updater, all queued on one stream of its own. A batch's features and labels are staged in
// pinned host memory so that their copy is a true asynchronous transfer. This file is also
// the backend module's entry (libstrom_cuda.so, loaded by device/cuda_module.cpp).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/cuda/device_buffer.hpp"
#include "strom/compute/cuda/device_layer.hpp"
#include "strom/compute/cuda/device_updater.hpp"
#include "strom/compute/cuda/pinned_buffer.hpp"
#include "strom/compute/cuda/presence.hpp"
#include "strom/compute/device/cuda_module_entry.hpp"
#include "strom/compute/device/device_engine.hpp"
#include "strom/compute/device/engine_spec.hpp"

namespace strom::compute {

namespace {

class cuda_engine final : public device_engine {
public:
  cuda_engine(const engine_spec& spec, std::string name)
    : name_(std::move(name)),
      slices_(spec.slices),
      regularized_(spec.regularized),
      update_rule_(cuda::make_device_updater(spec.updater)),
      l2_(spec.l2),
      inputs_(spec.inputs),
      classes_(spec.classes),
      max_batch_(spec.max_batch) {
    for (const auto& layer : spec.layers)
      layers_.push_back(cuda::make_device_layer(layer));
    parameters_.resize(spec.parameters);
    gradients_.resize(spec.parameters);
    state_.resize(spec.state);
    updater_state_.resize(spec.updater_state);
    std::size_t widest = inputs_;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      const auto& s = slices_[i];
      layers_[i]->bind(parameters_.data() + s.parameter_offset,
                       gradients_.data() + s.parameter_offset, state_.data() + s.state_offset);
      const auto out = spec.output_sizes[i];
      widest = std::max(widest, out);
      activations_.emplace_back(out * max_batch_);
      layers_[i]->reserve(max_batch_);
    }
    delta_a_.resize(widest * max_batch_);
    delta_b_.resize(widest * max_batch_);
    features_.resize(inputs_ * max_batch_);
    labels_.resize(max_batch_);
    staged_features_.resize(inputs_ * max_batch_);
    staged_labels_.resize(max_batch_);
    loss_.resize(1);
    staged_loss_.resize(1);
  }

  std::string name() const override { return name_; }

  void upload(flat_buffer which, std::span<const float> from) override {
    auto& to = device_copy(which);
    if (from.size() != to.size())
      throw std::invalid_argument(
        fmt::format("cuda engine: {} floats given for a buffer of {}", from.size(), to.size()));
    to.upload(from, context_.stream());
    context_.synchronize();  // the caller may change `from` once this returns
  }

  void download(flat_buffer which, std::span<float> to) override {
    const auto& from = device_copy(which);
    if (from.size() != to.size())
      throw std::invalid_argument(
        fmt::format("cuda engine: {} floats asked of a buffer of {}", to.size(), from.size()));
    from.download(to, context_.stream());
    context_.synchronize();
  }

  float compute_gradients(std::span<const float> features, std::span<const std::int32_t> labels,
                          std::size_t batch) override {
    if (batch > max_batch_)
      throw std::invalid_argument("cuda engine: batch larger than the reserved maximum");
    stage(features.first(batch * inputs_), labels.first(batch), batch);
    const float* input = features_.data();
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      layers_[i]->forward(input, activations_[i].data(), batch, pass::training, context_);
      input = activations_[i].data();
    }
    cuda::softmax_cross_entropy(activations_.back().data(), labels_.data(), batch, classes_,
                                delta_a_.data(), loss_.data(), context_);
    loss_.download(staged_loss_.span(), context_.stream());
    backward(batch);
    if (l2_ != 0.0f)
      cuda::add_l2(parameters_.data(), gradients_.data(), regularized_, l2_, context_);
    context_.synchronize();
    return staged_loss_.span()[0];
  }

  void compute_update(const step_context& step) override {
    update_rule_->compute_update(gradients_.data(), updater_state_.data(), gradients_.size(), step,
                                 context_);
  }

  void apply_gradients(const step_context& step) override {
    update_rule_->apply_step(gradients_.data(), updater_state_.data(), parameters_.data(),
                             gradients_.size(), step, context_);
  }

private:
  /// Copies this batch into the pinned staging buffers, then to the device.
  void stage(std::span<const float> features, std::span<const std::int32_t> labels,
             std::size_t batch) {
    std::memcpy(staged_features_.data(), features.data(), features.size_bytes());
    std::memcpy(staged_labels_.data(), labels.data(), labels.size_bytes());
    features_.upload(staged_features_.span().first(features.size()), context_.stream());
    labels_.upload(staged_labels_.span().first(batch), context_.stream());
  }

  /// The layers' backward passes from dL/d(logits) in delta_a_; two buffers take turns.
  void backward(std::size_t batch) {
    float* delta = delta_a_.data();
    float* other = delta_b_.data();
    for (std::size_t i = layers_.size(); i-- > 0;) {
      const float* input = i == 0 ? features_.data() : activations_[i - 1].data();
      float* input_gradient = i == 0 ? nullptr : other;
      layers_[i]->backward(input, activations_[i].data(), delta, input_gradient, batch, context_);
      std::swap(delta, other);
    }
  }

  cuda::device_buffer<float>& device_copy(flat_buffer which) {
    switch (which) {
      case flat_buffer::parameters: return parameters_;
      case flat_buffer::state: return state_;
      case flat_buffer::updater_state: return updater_state_;
      case flat_buffer::gradients: return gradients_;
    }
    throw std::invalid_argument("cuda engine: an unknown flat buffer");
  }

  std::string name_;
  cuda::cuda_context context_;
  std::vector<layer_slice> slices_;
  std::vector<float_range> regularized_;
  std::vector<std::unique_ptr<cuda::device_layer>> layers_;
  std::unique_ptr<cuda::device_updater> update_rule_;
  float l2_;
  std::size_t inputs_;
  std::size_t classes_;
  std::size_t max_batch_;
  cuda::device_buffer<float> parameters_;
  cuda::device_buffer<float> gradients_;
  cuda::device_buffer<float> state_;
  cuda::device_buffer<float> updater_state_;
  std::vector<cuda::device_buffer<float>> activations_;
  cuda::device_buffer<float> delta_a_;
  cuda::device_buffer<float> delta_b_;
  cuda::device_buffer<float> features_;
  cuda::device_buffer<std::int32_t> labels_;
  cuda::device_buffer<float> loss_;
  cuda::pinned_buffer<float> staged_features_;
  cuda::pinned_buffer<std::int32_t> staged_labels_;
  cuda::pinned_buffer<float> staged_loss_;
};

} // namespace

} // namespace strom::compute

extern "C" {

void strom_cuda_presence(strom::compute::cuda_presence* out) {
  *out = strom::compute::cuda::presence();
}

strom::compute::device_engine* strom_cuda_make_engine(const strom::compute::engine_spec* spec,
                                                      std::string* error) {
  using namespace strom::compute;
  try {
    const auto cuda = cuda::presence();
    if (!cuda.usable)
      throw std::runtime_error(cuda.why);
    return new cuda_engine(*spec, cuda.why);
  } catch (const std::exception& e) {  // exceptions stay inside the module
    *error = e.what();
    return nullptr;
  }
}

} // extern "C"
