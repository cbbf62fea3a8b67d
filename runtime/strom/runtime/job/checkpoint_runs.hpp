#pragma once
// Where a run keeps its checkpoints, and which it keeps. Each run gets a folder of its own,
// CHECKPOINT_DIR/JOBNAME/run-N (N one above the largest run there, as PyTorch Lightning
// numbers its versions), so a new run never overwrites an earlier run's checkpoints. In it,
// after each epoch E, epoch-E.ckpt; the last `keep` of them stay (older ones are removed once
// the new one is safely written), and best.ckpt holds the epoch of the best test accuracy so
// far (Keras's save_best_only), whatever `keep` removed.

#include <cstdint>
#include <string>

#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/checkpoint.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::runtime {

/// Epoch checkpoints a run keeps unless told otherwise (--keep-checkpoints).
inline constexpr std::uint32_t default_keep_checkpoints = 3;

/// Where a run saves its checkpoints and how many epoch checkpoints it keeps.
struct checkpoint_plan {
  std::string folder;  ///< the run's folder (new_run_folder); empty: no checkpoint
  std::uint32_t keep = default_keep_checkpoints;  ///< 0: every one
  std::uint32_t workers = 0;  ///< the run's, recorded in each checkpoint for --resume
  std::uint32_t nodes = 0;
  std::uint32_t servers = 0;
};

/// Creates the folder of a new run of job `job_name` under `checkpoint_dir`:
/// CHECKPOINT_DIR/JOBNAME/run-N, N one above the largest run-N there (1 for the first).
/// Errors name the folder and the OS error.
result<std::string> new_run_folder(const std::string& checkpoint_dir,
                                   const std::string& job_name);

/// The checkpoint of a run after `epochs` epochs: FOLDER/epoch-E.ckpt (E zero-padded to four
/// digits, so that a listing sorts by epoch).
std::string epoch_checkpoint_path(const std::string& run_folder, std::uint32_t epochs);

/// The run's best checkpoint by test accuracy: FOLDER/best.ckpt.
std::string best_checkpoint_path(const std::string& run_folder);

/// The latest checkpoint in `folder`, a --checkpoint-dir, its JOBNAME folder or a run
/// folder: the newest epoch checkpoint of the newest run that has one. Errors name the folder
/// and say what it holds instead (nothing, or the runs of several jobs).
result<std::string> latest_checkpoint(const std::string& folder);

/// The --checkpoint-dir whose run folder holds `checkpoint_path`; empty when the file is not
/// in a run folder.
std::string checkpoint_dir_of(const std::string& checkpoint_path);

/// Saves `trained` after `progress.epoch` epochs into the plan's folder (made when missing;
/// epoch_checkpoint_path), as best.ckpt too when its test accuracy beats the best so far, then
/// removes the epoch checkpoints older than the last `plan.keep`. Returns the epoch checkpoint's path.
result<std::string> save_run_checkpoint(const checkpoint_plan& plan, const job_spec& job,
                                        const compute::replica& trained,
                                        const checkpoint_progress& progress);

} // namespace strom::runtime
