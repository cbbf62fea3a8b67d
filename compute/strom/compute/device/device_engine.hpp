#pragma once
// The backend seam: a replica's step on an accelerator. The replica keeps the host copies of
// its flat buffers (parameters, state, updater state, gradients) and the engine keeps device
// copies of the same layout; the replica moves a buffer across only when the other side
// needs a newer copy (replica.cpp). The CPU backend is the replica's own host path.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

class model;

/// The flat buffers a replica keeps on the host and an engine copies to the device.
enum class flat_buffer : std::uint8_t { parameters, state, updater_state, gradients };
/// Every flat_buffer, in the order of the enumeration.
inline constexpr flat_buffer flat_buffers[] = {flat_buffer::parameters, flat_buffer::state,
                                               flat_buffer::updater_state, flat_buffer::gradients};

class device_engine {
public:
  virtual ~device_engine() = default;

  /// The device, for logs and metrics, e.g. "cuda:0 (NVIDIA H200)".
  virtual std::string name() const = 0;

  // -- copies between the replica's host buffers and the device's -----------------------

  /// The device copy of `which` becomes `from` (as long as it).
  virtual void upload(flat_buffer which, std::span<const float> from) = 0;
  /// `to` (as long as the device copy of `which`) becomes that copy.
  virtual void download(flat_buffer which, std::span<float> to) = 0;

  // -- the step on the device's copies -------------------------------------------------------

  /// Forward, softmax cross-entropy, backward and L2 on one batch (features [batch][inputs],
  /// labels [batch]); the gradients stay on the device. Returns the batch's mean loss.
  virtual float compute_gradients(std::span<const float> features,
                                  std::span<const std::int32_t> labels, std::size_t batch) = 0;
  /// The updater on the device's gradients: they become the update to subtract.
  virtual void compute_update(const step_context& step) = 0;
  /// The updater on the device's gradients, applied to the device's parameters.
  virtual void apply_gradients(const step_context& step) = 0;
};

/// An engine on the current CUDA device for `net`'s layers, `rule` and L2 factor `l2`, for
/// batches of up to net.max_batch() samples; `seed` seeds the device's dropout masks. Made by
/// the CUDA backend module (device/cuda_module.cpp), loaded on first use. Throws
/// std::runtime_error saying why where CUDA cannot run (find_cuda), std::invalid_argument
/// naming a layer or updater the CUDA backend has no version of.
std::unique_ptr<device_engine> make_cuda_engine(const model& net, const updater& rule, float l2,
                                                std::uint64_t seed);

} // namespace strom::compute
