#pragma once
// Training with several workers in this process (Deeplearning4j ParallelWrapper with
// threshold-encoded gradient sharing): one actor system, one node of N trainer actors, an
// accumulator and a relay. Every replica applies the same decoded frames, so worker 0's
// replica is the model that is evaluated and checkpointed.

#include <cstdint>

#include "strom/compute/result.hpp"
#include "strom/runtime/job_spec.hpp"
#include "strom/runtime/local_training.hpp"
#include "strom/runtime/metrics_report.hpp"

namespace strom::runtime {

/// Trains `job` (applying the overrides) with `workers` trainers sharing threshold-encoded
/// updates, then evaluates and checkpoints worker 0's replica after every epoch.
result<training_report> train_in_process(job_spec& job, const local_training_options& options,
                                         std::uint32_t workers);

} // namespace strom::runtime
