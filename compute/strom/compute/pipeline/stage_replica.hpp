#pragma once
// One pipeline stage's share of a network (issue #20): a contiguous run of its layers with
// their parameters, updater state and a gradient summed over a minibatch's micro-batches.
// The micro-batches in flight are computed in rows of one set of activations
// (model::forward_rows), a slot of rows each (micro_batch_slots), and the summed gradient is
// applied in one updater step (the flush): a step computes the whole network's gradient of
// the minibatch, up to summation order. The last stage's loss gradient is weighted by the
// micro-batch's share of the minibatch, so every stage's sum needs no further scaling.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/pipeline/column_blocks.hpp"
#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// Layers [first, end) of a network, as the built layers count them (make_layers: a spec's
/// dense layer with an activation is two).
struct layer_range {
  std::size_t first = 0;
  std::size_t end = 0;
};

/// Where a stage keeps the micro-batches in flight. Under the one-forward-one-backward
/// schedule (1F1B with a flush, PipeDream-Flush) the first stage keeps a bounded number in
/// flight, so every stage needs rows for that many, a slot each, instead of for the whole
/// minibatch. Micro-batch m takes slot m mod slots, which its predecessor there has left: the
/// first stage starts m only after a backward came back, and backwards come back in order.
struct micro_batch_slots {
  std::uint32_t slots = 1;     ///< micro-batches in flight at most: min(micro-batches, stages)
  std::size_t slot_rows = 1;   ///< rows of a slot: the largest micro-batch of a minibatch

  /// Rows a stage reserves.
  std::size_t rows() const noexcept { return slots * slot_rows; }
  /// The first row of micro-batch `index` of a minibatch.
  std::size_t first_row(std::uint32_t index) const noexcept {
    return (index % slots) * slot_rows;
  }
};

/// The slots of a pipeline of `stages` stages whose minibatches of up to `batch` samples are
/// split into `micro_batches`, under `schedule`: 1F1B keeps at most two micro-batches a stage
/// in flight (one fills the pipeline, one hides a message's round trip: with one, a 2-stage
/// MLP ran at 0.84x GPipe's samples/s on loopback, with two at 0.94x); GPipe keeps all.
micro_batch_slots slots_for(std::size_t batch, std::uint32_t micro_batches,
                            std::uint32_t stages,
                            schema::PipelineSchedule schedule =
                              schema::PipelineSchedule::ONE_FORWARD_ONE_BACKWARD);

/// What the last stage measured on one micro-batch.
struct micro_batch_loss {
  float loss = 0.0f;          ///< mean over the micro-batch
  std::size_t correct = 0;    ///< samples whose largest logit is at their label
};

/// A stage of a pipeline: its layers as a replica, the inputs of the minibatch in flight
/// and the gradient summed over its micro-batches.
class stage_replica {
public:
  /// `layers` reserved for the rows it computes at once; minibatches of up to `batch`.
  stage_replica(std::unique_ptr<replica> layers, layer_range range, std::size_t network_layers,
                std::size_t batch);

  // -- properties --------------------------------------------------------------------------

  /// Whether the stage reads the data (it holds the network's first layer).
  bool first() const noexcept { return range_.first == 0; }
  /// Whether the stage computes the loss (it holds the network's last layer).
  bool last() const noexcept { return range_.end == network_layers_; }
  layer_range range() const noexcept { return range_; }
  /// Floats of one sample's input and output.
  std::size_t input_width() const noexcept { return input_width_; }
  std::size_t output_width() const noexcept { return output_width_; }
  /// The largest minibatch (the job's batch size).
  std::size_t max_batch() const noexcept { return batch_; }
  /// Rows it computes at once: its micro-batch slots (micro_batch_slots::rows), or a batch.
  std::size_t rows() const noexcept { return core_->net().max_batch(); }
  compute::replica& core() noexcept { return *core_; }
  const compute::replica& core() const noexcept { return *core_; }

  // -- one minibatch -----------------------------------------------------------------------

  /// Rows [first_row, first_row + rows) of the stage's input (within rows()), to be filled
  /// before forward() of those rows.
  std::span<float> input_rows(std::size_t first_row, std::size_t rows);
  /// Training forward of input rows [first_row, first_row + rows); returns their output.
  std::span<const float> forward(std::size_t first_row, std::size_t rows);
  /// Backward of rows forward() computed, from dL/d(output); adds their parameter gradient
  /// to the sum and writes dL/d(input) into `input_gradient` (left empty on the first stage).
  void backward(std::size_t first_row, std::size_t rows, std::span<const float> output_gradient,
                std::span<float> input_gradient);
  /// The last stage: forward, loss and backward of input rows [first_row, first_row + rows)
  /// whose labels are `labels`, the loss gradient weighted by rows / minibatch_samples.
  micro_batch_loss forward_backward(std::size_t first_row, std::size_t rows,
                                    std::span<const std::int32_t> labels,
                                    std::size_t minibatch_samples,
                                    std::span<float> input_gradient);
  /// The flush: L2 and one updater step on the summed gradient, which starts again at zero.
  void step();
  /// The flush of a stage that has copies (--pipelines above 1): as step(), with the update
  /// also threshold-encoded against `encoder`'s residual in the updater's pass, for the
  /// copies to apply (the stage applies all of it at once, as a sharing worker does); nullopt
  /// when too little reached the threshold.
  std::optional<encoded_update> step_shared(threshold_encoder& encoder);
  /// Drops the gradient summed so far (a restore abandons the minibatch in flight).
  void discard_gradient();
  /// The summed gradient so far, laid out like the stage's parameters.
  std::span<const float> summed_gradient() const noexcept { return summed_; }
  /// Inference forward of `rows` samples of `input`; valid until the next call.
  std::span<const float> predict(std::span<const float> input, std::size_t rows);

private:
  void add_gradient();
  /// The summed gradient, with L2, into the model's gradients; the sum starts again at zero.
  void take_summed_gradient();

  std::unique_ptr<replica> core_;
  layer_range range_;
  std::size_t network_layers_;
  std::size_t input_width_;
  std::size_t output_width_;
  std::size_t batch_;
  std::vector<float> inputs_;         // the input rows of the micro-batches in flight
  std::vector<float> summed_;         // gradient summed over the micro-batches
  std::vector<float> logit_gradient_;  // the last stage's dL/d(logits) of one micro-batch
};

/// Stage `range` of `job`'s network, its dense layers split by `columns` (the range counts
/// their blocks as layers), in pipeline copy `pipeline` (--pipelines): its layers
/// built, parameters initialised as the whole network's are, dropout masks drawn as
/// data-parallel worker `pipeline`'s, the job's updater, reserved for `rows` rows (0: the
/// job's batch size). Errors name the layer or the range.
result<std::unique_ptr<stage_replica>> make_stage_replica(
  schema::Job::Reader job, layer_range range, std::uint32_t pipeline = 0, std::size_t rows = 0,
  std::span<const column_plan> columns = {});

} // namespace strom::compute
