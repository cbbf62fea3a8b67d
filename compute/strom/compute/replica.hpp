#pragma once
// One data-parallel model replica: the model, its updater and the updater's flat state.
// A step is split in two (compute the update, apply an update) because under gradient
// sharing the update that is applied is not the one that was computed: it is the sum of
// what arrives from every worker.
//
// On the CUDA backend the step runs on a device_engine that keeps device copies of the flat
// buffers. The host copies stay the replica's public face: net(), updater_state() and
// momentum() bring the host copy up to date first, and the next device step takes the host's
// (possibly changed) copy back first. A buffer crosses only when the other side is behind, so
// a worker alone keeps everything on the device between epochs.

#include <array>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/device/device_engine.hpp"
#include "strom/compute/device/device_kind.hpp"
#include "strom/compute/model.hpp"
#include "strom/compute/updaters/learning_rate_schedule.hpp"
#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

/// What the replica needs besides its model.
struct replica_options {
  std::unique_ptr<updater> update_rule;
  learning_rate_schedule schedule;
  float l2 = 0.0f;
  /// Where the step runs; the model must have reserved its batch before a cuda replica is
  /// made.
  device_kind device = device_kind::cpu;
  /// Seeds the device's dropout masks (the host layers seed their own).
  std::uint64_t device_seed = 0;
};

/// A model with its optimiser: the unit of data parallelism.
class replica {
public:
  /// Throws what make_cuda_engine throws when options.device is cuda and CUDA cannot run.
  replica(std::unique_ptr<model> net, replica_options options);
  ~replica();

  // -- properties --------------------------------------------------------------------------

  /// The model with its host buffers up to date. What a caller changes through it reaches
  /// the device before the next step.
  compute::model& net();
  const compute::model& net() const;
  /// The updater's flat state (e.g. Adam's moments), laid out m[n] then v[n] and so on.
  std::span<float> updater_state();
  std::span<const float> updater_state() const;
  /// Where the step runs: "cpu", or the engine's device, e.g. "cuda:0 (NVIDIA H200)".
  std::string device_name() const;
  /// The part of the updater state that carries past gradients forward (updater::momentum);
  /// empty for updaters without momentum.
  std::span<float> momentum();
  /// Updater steps taken.
  std::uint64_t iteration() const noexcept { return iteration_; }
  /// Epochs completed.
  std::uint32_t epoch() const noexcept { return epoch_; }
  /// Learning rate the next step will use.
  float learning_rate() const noexcept { return options_.schedule.rate_at(iteration_, epoch_); }

  // -- training ----------------------------------------------------------------------------

  /// Forward, backward, L2 and updater on one batch; returns the loss. The update to subtract
  /// is left in update() (the gradient buffer, transformed in place) and not yet applied.
  float compute_update(std::span<const float> features, std::span<const std::int32_t> labels,
                       std::size_t batch);
  /// The update computed by the last compute_update.
  std::span<const float> update() { return net().gradients(); }
  /// parameters -= update, over the whole model or a slice starting at `offset`.
  void apply(std::span<const float> update, std::size_t offset = 0);
  /// compute_update then apply it, in one pass over the parameters where the updater can
  /// (updater::apply_step): plain single-worker training. update() is unspecified after it.
  float train_step(std::span<const float> features, std::span<const std::int32_t> labels,
                   std::size_t batch);
  /// The first half of a step: forward, backward and L2 on one batch; returns the loss.
  /// scan_update finishes the step. `ready` (when set) hears layer by layer from which offset
  /// on the gradients, L2 included, are final (model::gradients_ready).
  float compute_gradients(std::span<const float> features, std::span<const std::int32_t> labels,
                          std::size_t batch, const model::gradients_ready& ready = {});
  /// The second half of a step under gradient sharing: the updater on the gradients of the
  /// last compute_gradients, each update handed to threshold_scan's pass over `scan` (the
  /// same pass where the updater can: updater::scan_step); returns the scan's count. The
  /// update is not kept: update() is unspecified after it.
  std::size_t scan_update(const threshold_scan_args& scan);
  /// The second half of a step whose gradients came from elsewhere (a parameter server's
  /// merged gradient written into gradients()): the updater on them, applied to the
  /// parameters. gradients() is unspecified after it.
  void apply_gradients();
  /// Adds the L2 term to gradients() (compute_gradients does it itself); for gradients put
  /// together elsewhere, such as a pipeline stage's sum over its micro-batches.
  void regularize();
  /// Marks an epoch as completed (epoch-based schedules move on).
  void finish_epoch() noexcept { ++epoch_; }
  /// Restores the progress counters (from a checkpoint).
  void set_progress(std::uint64_t iteration, std::uint32_t epoch) noexcept;

private:
  /// Which copy of a flat buffer is newer, where a device engine holds one.
  enum class newer : std::uint8_t { neither, host, device };
  /// Which copy of `which` is newer.
  newer& copy_of(flat_buffer which) const { return copies_[static_cast<std::size_t>(which)]; }
  /// The host copy of `which`.
  std::span<float> host_copy(flat_buffer which) const;
  /// Downloads the model's buffers (and the updater state when `updater_too`) that the device
  /// holds newer. Marks them `after` (host: the caller may change them).
  void to_host(bool updater_too, newer after) const;
  /// The engine, with every buffer the host holds newer uploaded first.
  device_engine& on_device();
  /// Adds the L2 term to gradients() in [from, to) only.
  void regularize(std::size_t from, std::size_t to);
  /// The context of the updater step about to run; counts it.
  step_context next_step() noexcept;

  std::unique_ptr<compute::model> model_;
  replica_options options_;
  mutable std::vector<float> updater_state_;
  std::unique_ptr<device_engine> engine_;  // null on the CPU backend
  mutable std::array<newer, std::size(flat_buffers)> copies_{newer::host, newer::host,
                                                             newer::host, newer::host};
  std::uint64_t iteration_ = 0;
  std::uint32_t epoch_ = 0;
};

} // namespace strom::compute
