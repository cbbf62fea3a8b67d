#pragma once
// The machine-readable summary of a run (`--metrics-out FILE`): one JSON object. Later
// transports add their fields to the same object.

#include <cstdint>
#include <string>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// The outcome of a training run.
struct training_report {
  std::string job;
  double test_accuracy = -1.0;  ///< -1 without a test set (null in JSON, as is test_loss)
  double test_loss = 0.0;
  double final_loss = 0.0;  ///< mean training loss of the last epoch
  std::uint32_t epochs = 0;
  std::uint32_t workers = 1;
  std::uint32_t nodes = 1;
  double wall_seconds = 0.0;   ///< the whole run, data loading and evaluation included
  double train_seconds = 0.0;  ///< the training loop only
  std::uint64_t train_samples = 0;
  double train_samples_per_second = 0.0;  ///< train_samples / train_seconds
  std::uint64_t iterations = 0;
  std::string checkpoint;  ///< path of the final checkpoint, empty if none

  // -- gradient sharing (zero when one worker trains alone) ---------------------------------
  std::uint64_t bytes_sent = 0;                 ///< update-frame bytes sent
  std::uint64_t dense_bytes_equivalent = 0;     ///< what dense fp32 updates would have sent
  std::uint64_t updates_applied = 0;            ///< frames applied, summed over workers
  std::uint64_t duplicate_updates_dropped = 0;  ///< dropped by relays
  std::uint64_t duplicate_updates_applied = 0;  ///< must stay 0
  std::uint64_t frames_rejected = 0;            ///< unreadable frames dropped
  double mean_density = 0.0;                    ///< values sent per element, per encoded round
  double final_threshold = 0.0;                 ///< the encoder's threshold at the end
};

/// The report as one JSON object.
std::string to_json(const training_report& report);

/// Writes to_json(report) and a newline to `path`.
result<void> write_metrics(const std::string& path, const training_report& report);

} // namespace strom::runtime
