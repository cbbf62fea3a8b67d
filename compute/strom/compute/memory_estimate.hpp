#pragma once
// What a job's workers will allocate, estimated from the job spec alone before anything
// large is allocated, so that a job too big for its machine is refused with a message
// instead of ending in std::bad_alloc or the kernel's OOM killer. A pure function of the
// spec: the machine's memory is read in runtime/ (machine_memory.hpp), never here.
//
// Counted per worker replica, each part from the sizes the real objects take: parameters,
// gradients, batch-norm running statistics, the updater's state (updater::state_size: Adam
// 2x the parameters, momentum, RMSProp and AdaGrad 1x, SGD none), the sharing residual and
// its bitmap workspace (threshold_encoder) when updates are shared, and at the batch size
// the activations, their gradients and every layer's workspace (model::reserve) plus the
// batch being fed (batch_loader). Not counted: the data set (its size is in the data
// files, not the spec) and frames in flight.

#include <cstdint>
#include <string>

#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// Where and how the job's replicas run.
struct memory_estimate_options {
  std::uint32_t workers = 1;    ///< replicas on this machine
  bool shares_updates = false;  ///< more than one worker in the whole job: residuals too
};

/// Bytes one worker replica needs, part by part, and how many replicas there are.
struct memory_estimate {
  std::uint64_t parameters = 0;     ///< trainable parameters
  std::uint64_t gradients = 0;      ///< one gradient per parameter
  std::uint64_t model_state = 0;    ///< non-trainable state (batch-norm running statistics)
  std::uint64_t updater_state = 0;  ///< the updater's per-parameter state
  std::uint64_t sharing = 0;        ///< residual and encoding workspace; 0 without sharing
  std::uint64_t batch = 0;          ///< activations, their gradients, workspaces, the batch
  std::uint32_t batch_size = 0;     ///< the batch `batch` was counted at
  std::uint32_t workers = 1;        ///< replicas counted

  /// Bytes of one replica (saturated).
  std::uint64_t per_worker() const noexcept;
  /// Bytes of all the replicas (saturated).
  std::uint64_t total() const noexcept;
};

/// The memory `job` needs with `options`; checks the network, the updater and the training
/// settings on the way, and fails with their messages if they are wrong.
result<memory_estimate> estimate_memory(schema::Job::Reader job,
                                        const memory_estimate_options& options);

/// "about 25.6 GB (per worker: parameters 3.2 GB, ...)" for messages.
std::string to_string(const memory_estimate& estimate);

/// A byte count for people: "3.1 GB", "512.0 kB", "100 bytes" (decimal units).
std::string bytes_text(std::uint64_t bytes);

} // namespace strom::compute
