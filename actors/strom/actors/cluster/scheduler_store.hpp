#pragma once
// What a scheduler keeps across its own restart (strom node --scheduler --state-dir): the
// membership counters that must never go back (node ids, incarnations, the membership epoch),
// the jobs that were running with how far each got, and the outcomes of the ended ones. The
// model itself is not here: a job's checkpoint is a trainer's snapshot (schema/snapshot.capnp)
// that the job's checkpoint keeper saves beside it.
//
// Actors never touch files: the runtime hands the scheduler a scheduler_store (state_dir.hpp
// keeps it in a directory). The record is a plain value with an inspect function, so the same
// state could be sent to a standby scheduler instead of a disk.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "strom/actors/messages.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors {

/// A job that was running when the record was written.
struct saved_job {
  std::uint64_t job_id = 0;
  job_submission submission;
  std::vector<std::string> node_names;  ///< the nodes it trained on, to wait for after a restart
  std::uint32_t epochs_done = 0;        ///< epochs its checkpoint holds; 0: none taken yet
  training_report report;               ///< as of its checkpoint
  std::uint32_t restarts = 0;           ///< of the scheduler while the job ran
  std::uint32_t job_restarts = 0;       ///< of the job from its checkpoint (max_restarts)
};

/// A scheduler's durable state.
struct scheduler_record {
  std::uint32_t restarts = 0;  ///< times a scheduler started from this record
  std::uint64_t next_node_id = 1;
  std::uint64_t next_job_id = 1;
  std::uint64_t membership_epoch = 0;
  std::map<std::string, std::uint32_t> incarnations;
  std::vector<saved_job> jobs;           ///< running
  std::vector<job_finished> outcomes;    ///< ended, for status and late attaches
};

template <class F>
typename F::result_type inspect(F& f, saved_job& x) {
  return f(caf::meta::type_name("saved_job"), x.job_id, x.submission, x.node_names,
           x.epochs_done, x.report, x.restarts, x.job_restarts);
}

template <class F>
typename F::result_type inspect(F& f, scheduler_record& x) {
  return f(caf::meta::type_name("scheduler_record"), x.restarts, x.next_node_id, x.next_job_id,
           x.membership_epoch, x.incarnations, x.jobs, x.outcomes);
}

/// Where a scheduler keeps its record and its jobs' checkpoints. Every call is synchronous
/// and small or rare (a record on each membership change, a checkpoint per epoch).
class scheduler_store {
public:
  virtual ~scheduler_store() = default;
  /// Replaces the record (atomically: a crash leaves the old one or the new one).
  virtual result<void> save(const scheduler_record& record) = 0;
  /// Replaces job `job_id`'s checkpoint with the encoded snapshot `encoded`.
  virtual result<void> save_checkpoint(std::uint64_t job_id, const compute::frame& encoded) = 0;
  /// Job `job_id`'s checkpoint; an error names the file and what is wrong with it.
  virtual result<compute::frame> load_checkpoint(std::uint64_t job_id) = 0;
  /// Removes job `job_id`'s checkpoint (the job ended); missing is fine.
  virtual void drop_checkpoint(std::uint64_t job_id) = 0;
};

} // namespace strom::actors
