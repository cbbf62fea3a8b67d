#pragma once
// The embedding API: a host program trains strom jobs inside its own process. The runtime
// runs one scheduler and one node (its trainers sharing encoded updates) in an actor system,
// either one it owns or the host's, and reuses them for every job it is given.

#include <cstdint>
#include <memory>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/job/metrics_report.hpp"
#include "strom/runtime/job/training_progress.hpp"

namespace strom {

using runtime::training_report;

/// How an embedded runtime is set up.
struct embedded_runtime_options {
  std::uint32_t workers = 0;  ///< trainers of its node; 0: one per core
};

/// A scheduler and one node in an actor system, ready to train jobs one after another.
/// Starting blocks until the node has joined (at most 10 s) and throws
/// std::runtime_error when it did not; destroying it stops its actors, a running job's too.
class embedded_runtime {
public:
  /// Owns an actor system of its own.
  explicit embedded_runtime(embedded_runtime_options options = {});

  /// Runs in the host's actor system, which must outlive the runtime. The host must have
  /// called strom::runtime::configure_for_strom on the system's configuration before creating
  /// it (<strom/runtime/system_config.hpp>); throws std::invalid_argument when strom's
  /// message types are missing from it.
  embedded_runtime(caf::actor_system& host, embedded_runtime_options options = {});

  /// Stops the node and the scheduler and waits (bounded) until they have quit.
  ~embedded_runtime();

  embedded_runtime(const embedded_runtime&) = delete;
  embedded_runtime& operator=(const embedded_runtime&) = delete;

  /// Applies the overrides in `options` to `job` and submits it; returns its job id at once.
  /// The scheduler runs one job at a time: a second submission while one runs is refused.
  /// options.observer is not used here: pass one to wait().
  result<std::uint64_t> submit(runtime::job_spec& job,
                               const runtime::local_training_options& options);

  /// Waits for job `job_id` to end and returns its report; `observer` (may be null) sees the
  /// progress from now on. A job that has ended already returns at once.
  result<training_report> wait(std::uint64_t job_id, runtime::training_observer* observer = nullptr);

  /// Submits `job` and waits for its end, options.observer seeing all of its progress.
  result<training_report> train(runtime::job_spec& job,
                                const runtime::local_training_options& options);

  /// The scheduler, for hosts that talk to it directly (job_client.hpp, status queries).
  caf::actor scheduler() const { return scheduler_; }

  /// The actor system the runtime's actors live in.
  caf::actor_system& system() const noexcept { return system_; }

private:
  struct owned_system;

  embedded_runtime(std::unique_ptr<owned_system> owned, caf::actor_system* host,
                   embedded_runtime_options options);

  /// Stops the node, then the scheduler, and waits (bounded) for both to quit.
  void stop() noexcept;

  std::unique_ptr<owned_system> owned_;  ///< null when attached to the host's system
  caf::actor_system& system_;
  caf::actor scheduler_;
  caf::actor node_;  ///< the node's agent
};

} // namespace strom
