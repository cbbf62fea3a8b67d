#pragma once
// Training on one worker in this process: load data, build the replica, run the epochs,
// evaluate, checkpoint. The actor runtime's trainers reuse the same replica and data pieces.

#include <cstdint>
#include <optional>
#include <string>

#include "strom/actors/topology.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job_spec.hpp"
#include "strom/runtime/metrics_report.hpp"
#include "strom/runtime/training_progress.hpp"

namespace strom::runtime {

/// Command-line overrides and outputs of a run.
struct local_training_options {
  std::optional<std::uint32_t> epochs;  ///< overrides training.epochs
  std::optional<std::uint64_t> seed;    ///< overrides training.seed
  std::optional<actors::topology_kind> topology;  ///< overrides distributed.topology
  std::optional<std::uint32_t> fanout;            ///< overrides distributed.fanout
  std::string checkpoint_dir;           ///< empty: no checkpoint
  training_observer* observer = nullptr;
};

/// Trains `job` to the end (applying the overrides to it) and reports the outcome; a stop
/// signal (stop_signals.hpp) ends it with an error after the current batch.
result<training_report> train_locally(job_spec& job, const local_training_options& options);

} // namespace strom::runtime
