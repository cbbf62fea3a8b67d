#include "strom/compute/replica.hpp"

#include <algorithm>
#include <stdexcept>

#include "strom/compute/updaters/l2_regularization.hpp"

namespace strom::compute {

replica::replica(std::unique_ptr<compute::model> net, replica_options options)
  : model_(std::move(net)), options_(std::move(options)) {
  updater_state_.resize(options_.update_rule->state_size(model_->parameters().size()));
  options_.update_rule->initialize_state(updater_state_);
}

float replica::compute_gradients(std::span<const float> features,
                                 std::span<const std::int32_t> labels, std::size_t batch,
                                 const model::gradients_ready& ready) {
  if (!ready) {
    const float loss = model_->compute_gradients(features, labels, batch);
    regularize();
    return loss;
  }
  // Each layer's gradients get their L2 term before they are handed on. One pointer
  // captured: the wrapper fits std::function's own buffer, so a step allocates nothing.
  struct handing_on {
    replica& self;
    const model::gradients_ready& ready;
    std::size_t done;
    void operator()(std::size_t from) {
      self.regularize(from, done);
      done = from;
      ready(from);
    }
  } hand_on{*this, ready, model_->parameters().size()};
  return model_->compute_gradients(features, labels, batch,
                                   [&hand_on](std::size_t from) { hand_on(from); });
}

void replica::regularize() {
  if (options_.l2 != 0.0f)
    add_l2(model_->parameters(), model_->gradients(), model_->regularized_ranges(), options_.l2);
}

void replica::regularize(std::size_t from, std::size_t to) {
  if (options_.l2 == 0.0f || from >= to)
    return;
  for (const auto& range : model_->regularized_ranges()) {
    const float_range part{std::max(range.begin, from), std::min(range.end, to)};
    if (part.begin < part.end)
      add_l2(model_->parameters(), model_->gradients(), {&part, 1}, options_.l2);
  }
}

step_context replica::next_step() noexcept {
  const step_context step{iteration_, epoch_, learning_rate()};
  ++iteration_;
  return step;
}

float replica::compute_update(std::span<const float> features,
                              std::span<const std::int32_t> labels, std::size_t batch) {
  const float loss = compute_gradients(features, labels, batch);
  options_.update_rule->compute_update(model_->gradients(), updater_state_, next_step());
  return loss;
}

std::size_t replica::scan_update(const threshold_scan_args& scan) {
  return options_.update_rule->scan_step(model_->gradients(), updater_state_, next_step(), scan);
}

std::span<float> replica::momentum() {
  return options_.update_rule->momentum(updater_state_, model_->parameters().size());
}

void replica::apply(std::span<const float> update, std::size_t offset) {
  auto parameters = model_->parameters();
  if (offset > parameters.size() || update.size() > parameters.size() - offset)
    throw std::out_of_range("replica::apply: update slice outside the parameters");
  apply_update(parameters.subspan(offset, update.size()), update);
}

float replica::train_step(std::span<const float> features, std::span<const std::int32_t> labels,
                          std::size_t batch) {
  const float loss = compute_gradients(features, labels, batch);
  apply_gradients();
  return loss;
}

void replica::apply_gradients() {
  options_.update_rule->apply_step(model_->gradients(), updater_state_, next_step(),
                                   model_->parameters());
}

void replica::set_progress(std::uint64_t iteration, std::uint32_t epoch) noexcept {
  iteration_ = iteration;
  epoch_ = epoch;
}

} // namespace strom::compute
