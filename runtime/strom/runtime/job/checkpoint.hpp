#pragma once
// Checkpoints (schema/checkpoint.capnp): the job, the flat parameter, updater-state and
// layer-state buffers, and the progress made. Written atomically (temp file + rename) so a
// crash mid-write never leaves a torn checkpoint behind. Each section (job, parameters,
// updater state, layer state, progress) carries a CRC-32 checked on load, so a damaged file
// is refused with the damaged section named, never evaluated or trained on.

#include <capnp/common.h>
#include <kj/array.h>

#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::runtime {

/// How far training got when a checkpoint was taken, and on how many workers.
struct checkpoint_progress {
  std::uint32_t epoch = 0;        ///< epochs completed
  std::uint64_t iteration = 0;    ///< updater steps taken
  std::uint64_t samples_seen = 0;
  float test_accuracy = -1.0f;    ///< -1 when not evaluated
  float test_loss = 0.0f;
  /// What the run trained on (0: not recorded, in a checkpoint of format version 2).
  std::uint32_t workers = 0;  ///< in all, over every node
  std::uint32_t nodes = 0;
  std::uint32_t servers = 0;  ///< a kvstore job's server nodes
};

/// A checkpoint read back from disk.
struct checkpoint_contents {
  job_spec job;
  std::vector<float> parameters;
  std::vector<float> updater_state;
  std::vector<float> layer_state;
  checkpoint_progress progress;
};

/// Writes `trained` (built from `job`) and its progress to `path`.
result<void> save_checkpoint(const std::string& path, const job_spec& job,
                             const compute::replica& trained, const checkpoint_progress& progress);

/// Reads a checkpoint, refusing truncated, corrupt, damaged (a section's checksum does not
/// match) or foreign files, and those of another format version, with a clear error.
result<checkpoint_contents> load_checkpoint(const std::string& path);

/// load_checkpoint on a file's words already read from `path` (word-aligned).
result<checkpoint_contents> parse_checkpoint(const std::string& path,
                                             kj::ArrayPtr<const capnp::word> words);

/// Copies a checkpoint's buffers and progress into a replica built from its job; refuses
/// buffers whose sizes do not match that replica and NaN or infinite values (naming the
/// section, the element and its layer), before anything is copied.
result<void> restore_checkpoint(const checkpoint_contents& saved, compute::replica& target);

} // namespace strom::runtime
