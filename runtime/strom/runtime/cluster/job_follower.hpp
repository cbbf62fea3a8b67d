#pragma once
// What a client makes of the scheduler's word about the job it follows: the job's progress,
// its nodes and its epochs go to an observer, and its end becomes an outcome (the report, or
// why it was cancelled or failed). `strom submit` and the embedding API follow a job with it
// (job_client.cpp), and so does the live simulation's client (sim/live/live_stand_ins.cpp):
// both read the client protocol the same way.

#include <cstdint>
#include <optional>

#include "strom/actors/protocol/clients.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/metrics_report.hpp"
#include "strom/runtime/job/training_progress.hpp"

namespace strom::runtime {

class job_follower {
public:
  /// Follows job `job_id`; messages about other jobs are ignored. `observer` may be null.
  job_follower(std::uint64_t job_id, training_observer* observer);

  void on(const actors::job_progress& progress);
  void on(const actors::job_epoch& epoch);
  /// Whether `done` ended the followed job; outcome() holds how.
  bool on(const actors::job_finished& done);

  /// The job's report once it succeeded; why not once it was cancelled or failed; nothing
  /// while it runs.
  const std::optional<result<training_report>>& outcome() const noexcept { return outcome_; }

private:
  std::uint64_t job_id_;
  training_observer* observer_;
  std::optional<result<training_report>> outcome_;
};

} // namespace strom::runtime
