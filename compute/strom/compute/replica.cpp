#include "strom/compute/replica.hpp"

#include <algorithm>
#include <stdexcept>

#include "strom/compute/updaters/l2_regularization.hpp"

namespace strom::compute {

replica::replica(std::unique_ptr<compute::model> net, replica_options options)
  : model_(std::move(net)), options_(std::move(options)) {
  updater_state_.resize(options_.update_rule->state_size(model_->parameters().size()));
  options_.update_rule->initialize_state(updater_state_);
  if (options_.device == device_kind::cuda)
    engine_ = make_cuda_engine(*model_, *options_.update_rule, options_.l2, options_.device_seed);
}

replica::~replica() = default;

// -- where the newest copy of each buffer is --------------------------------------------------

std::span<float> replica::host_copy(flat_buffer which) const {
  switch (which) {
    case flat_buffer::parameters: return model_->parameters();
    case flat_buffer::state: return model_->state();
    case flat_buffer::updater_state: return updater_state_;
    case flat_buffer::gradients: return model_->gradients();
  }
  throw std::invalid_argument("replica: an unknown flat buffer");
}

void replica::to_host(bool updater_too, newer after) const {
  if (!engine_)
    return;
  for (const flat_buffer which : flat_buffers) {
    if (which == flat_buffer::updater_state && !updater_too)
      continue;
    auto& copy = copy_of(which);
    if (copy == newer::device) {
      engine_->download(which, host_copy(which));
      copy = newer::neither;
    }
    if (after == newer::host)
      copy = newer::host;
  }
}

device_engine& replica::on_device() {
  for (const flat_buffer which : flat_buffers) {
    if (auto& copy = copy_of(which); copy == newer::host) {
      engine_->upload(which, host_copy(which));
      copy = newer::neither;
    }
  }
  return *engine_;
}

compute::model& replica::net() {
  to_host(false, newer::host);
  return *model_;
}

const compute::model& replica::net() const {
  to_host(false, newer::neither);
  return *model_;
}

std::span<float> replica::updater_state() {
  to_host(true, newer::host);
  return updater_state_;
}

std::span<const float> replica::updater_state() const {
  to_host(true, newer::neither);
  return updater_state_;
}

std::string replica::device_name() const {
  return engine_ ? engine_->name() : "cpu";
}

// -- training -----------------------------------------------------------------------------

float replica::compute_gradients(std::span<const float> features,
                                 std::span<const std::int32_t> labels, std::size_t batch,
                                 const model::gradients_ready& ready) {
  if (engine_) {
    copy_of(flat_buffer::gradients) = newer::neither;  // overwritten whole: not uploaded
    const float loss = on_device().compute_gradients(features, labels, batch);
    copy_of(flat_buffer::gradients) = newer::device;
    copy_of(flat_buffer::state) = newer::device;  // batch normalisation's running statistics
    if (ready) {  // the device hands its gradients over whole: they are final from 0 on
      to_host(false, newer::neither);
      ready(0);
    }
    return loss;
  }
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
  to_host(false, newer::host);
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
  if (engine_) {
    on_device().compute_update(next_step());
    copy_of(flat_buffer::gradients) = copy_of(flat_buffer::updater_state) = newer::device;
    return loss;
  }
  options_.update_rule->compute_update(model_->gradients(), updater_state_, next_step());
  return loss;
}

std::size_t replica::scan_update(const threshold_scan_args& scan) {
  if (engine_) {
    // The update is computed on the device and scanned on the host, where the sharing's
    // residual lives.
    on_device().compute_update(next_step());
    copy_of(flat_buffer::gradients) = copy_of(flat_buffer::updater_state) = newer::device;
    to_host(false, newer::neither);
    const auto count = threshold_scan(scan.residual, model_->gradients(), scan.threshold,
                                      scan.indices, scan.scale, scan.also);
    if (!scan.also.empty())  // the parameters, when the worker applies its own update
      copy_of(flat_buffer::parameters) = newer::host;
    return count;
  }
  return options_.update_rule->scan_step(model_->gradients(), updater_state_, next_step(), scan);
}

std::span<float> replica::momentum() {
  to_host(true, newer::host);
  return options_.update_rule->momentum(updater_state_, model_->parameters().size());
}

void replica::apply(std::span<const float> update, std::size_t offset) {
  auto parameters = net().parameters();
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
  if (engine_) {
    on_device().apply_gradients(next_step());
    for (const flat_buffer which : {flat_buffer::parameters, flat_buffer::gradients,
                                    flat_buffer::updater_state})
      copy_of(which) = newer::device;
    return;
  }
  options_.update_rule->apply_step(model_->gradients(), updater_state_, next_step(),
                                   model_->parameters());
}

void replica::set_progress(std::uint64_t iteration, std::uint32_t epoch) noexcept {
  iteration_ = iteration;
  epoch_ = epoch;
}

} // namespace strom::compute
