#include "strom/compute/pipeline/stage_replica.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "strom/compute/layers/softmax_cross_entropy.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/replica_from_spec.hpp"

namespace strom::compute {

micro_batch_slots slots_for(std::size_t batch, std::uint32_t micro_batches,
                            std::uint32_t stages, schema::PipelineSchedule schedule) {
  const auto micro = std::max<std::uint32_t>(micro_batches, 1);
  const auto window = schedule == schema::PipelineSchedule::GPIPE
                        ? micro
                        : 2 * std::max<std::uint32_t>(stages, 1);
  return {std::min(micro, window), std::max<std::size_t>((batch + micro - 1) / micro, 1)};
}

stage_replica::stage_replica(std::unique_ptr<replica> layers, layer_range range,
                             std::size_t network_layers, std::size_t batch)
  : core_(std::move(layers)), range_(range), network_layers_(network_layers),
    input_width_(core_->net().input_shape().size()),
    output_width_(core_->net().layers().back()->output_shape().size()), batch_(batch) {
  inputs_.assign(input_width_ * this->rows(), 0.0f);
  summed_.assign(core_->net().parameters().size(), 0.0f);
  if (last())
    logit_gradient_.assign(output_width_ * this->rows(), 0.0f);
}

std::span<float> stage_replica::input_rows(std::size_t first_row, std::size_t rows) {
  if (first_row > this->rows() || rows > this->rows() - first_row)
    throw std::out_of_range("stage_replica: rows outside the stage's reserved rows");
  return std::span{inputs_}.subspan(first_row * input_width_, rows * input_width_);
}

std::span<const float> stage_replica::forward(std::size_t first_row, std::size_t rows) {
  return core_->net().forward_rows(input_rows(first_row, rows), first_row, rows);
}

void stage_replica::add_gradient() {
  const auto gradients = core_->net().gradients();
  std::transform(summed_.begin(), summed_.end(), gradients.begin(), summed_.begin(),
                 [](float sum, float g) { return sum + g; });
}

void stage_replica::backward(std::size_t first_row, std::size_t rows,
                             std::span<const float> output_gradient,
                             std::span<float> input_gradient) {
  core_->net().backward_rows(input_rows(first_row, rows), first_row, rows, output_gradient,
                             first() ? std::span<float>{} : input_gradient);
  add_gradient();
}

micro_batch_loss stage_replica::forward_backward(std::size_t first_row, std::size_t rows,
                                                 std::span<const std::int32_t> labels,
                                                 std::size_t minibatch_samples,
                                                 std::span<float> input_gradient) {
  if (!last())
    throw std::logic_error("stage_replica: only the last stage computes the loss");
  auto logits = forward(first_row, rows);
  auto delta = std::span{logit_gradient_}.first(rows * output_width_);
  micro_batch_loss measured;
  measured.loss = softmax_cross_entropy(logits, labels.first(rows), rows, output_width_, delta);
  measured.correct = count_correct(logits, labels.first(rows), rows, output_width_);
  // (softmax - onehot) / rows, weighted by rows / minibatch: the minibatch mean's share.
  const float weight = static_cast<float>(rows) / static_cast<float>(minibatch_samples);
  for (auto& d : delta)
    d *= weight;
  backward(first_row, rows, delta, input_gradient);
  return measured;
}

void stage_replica::take_summed_gradient() {
  auto gradients = core_->net().gradients();
  std::copy(summed_.begin(), summed_.end(), gradients.begin());
  std::fill(summed_.begin(), summed_.end(), 0.0f);
  core_->regularize();
}

void stage_replica::step() {
  take_summed_gradient();
  core_->apply_gradients();
}

std::optional<encoded_update> stage_replica::step_shared(threshold_encoder& encoder) {
  take_summed_gradient();
  return encoder.encode_with(
    [this](const threshold_scan_args& scan) { return core_->scan_update(scan); }, -1.0f,
    core_->net().parameters());
}

void stage_replica::discard_gradient() {
  std::fill(summed_.begin(), summed_.end(), 0.0f);
}

std::span<const float> stage_replica::predict(std::span<const float> input, std::size_t rows) {
  return core_->net().predict(input, rows);
}

result<std::unique_ptr<stage_replica>> make_stage_replica(
  schema::Job::Reader job, layer_range range, std::uint32_t pipeline, std::size_t rows,
  std::span<const column_plan> columns) {
  auto training = job.getTraining();
  if (auto ok = check_training(training); !ok)
    return ok.err();
  // Copy r of a stage draws its dropout masks as data-parallel worker r would.
  auto built = make_layers(job.getNetwork(), dropout_seed(training.getSeed(), pipeline));
  if (!built)
    return built.err();
  if (auto split = split_columns(*built, columns); !split)
    return split.err();
  const auto count = built->layers.size();
  if (range.first >= range.end || range.end > count)
    return error{fmt::format("pipeline stage: layers [{}, {}) are not a non-empty range of the "
                             "network's {} layers", range.first, range.end, count)};
  const std::size_t batch = training.getBatchSize();
  const shape input = range.first == 0 ? built->input
                                       : built->layers[range.first - 1]->output_shape();
  std::vector<std::unique_ptr<layer>> mine;
  for (std::size_t i = range.first; i < range.end; ++i)
    mine.push_back(std::move(built->layers[i]));
  const auto width = mine.back()->output_shape().size();
  auto net = std::make_unique<model>(input, std::move(mine), width);
  net->initialize(training.getSeed(), range.first);
  net->reserve(rows == 0 ? batch : rows);
  auto options = make_replica_options(job);
  if (!options)
    return options.err();
  return std::make_unique<stage_replica>(
    std::make_unique<replica>(std::move(net), std::move(options).value()), range, count, batch);
}

} // namespace strom::compute
