#pragma once
// The client side of a cluster: submit a job to a scheduler, follow its progress to the end
// (or detach), re-attach by job id, cancel a job, ask for the cluster's status. Every wait is
// bounded: a scheduler that goes away or falls silent ends the wait with an error. Waits end
// on SIGINT or SIGTERM while a stop_signals lives (stop_signals.hpp): a client that submitted
// and follows a job cancels it, one that attached detaches; the error says which.

#include <chrono>
#include <cstdint>
#include <functional>

#include <caf/all.hpp>

#include "strom/actors/protocol/clients.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/metrics_report.hpp"
#include "strom/runtime/job/training_progress.hpp"

namespace strom::runtime {

/// Time limits of a client.
struct client_limits {
  /// For the scheduler to answer a request.
  caf::timespan answer = std::chrono::seconds(10);
  /// Between two messages about a followed job (progress comes several times a second while
  /// it trains; preparing a job or an epoch's evaluation are the long quiet times).
  caf::timespan silence = std::chrono::minutes(6);
};

/// Reaches the scheduler again after its connection broke (it restarts at the same address),
/// within the caller's reconnect timeout; empty: a lost scheduler ends the wait.
using scheduler_reconnector = std::function<result<caf::actor>()>;

/// Submits `submission` and returns its job id without waiting for the job.
result<std::uint64_t> submit_job(caf::actor_system& system, const caf::actor& scheduler,
                                 const actors::job_submission& submission,
                                 const client_limits& limits = {});

/// Submits `submission` and follows the job to its end, telling `observer` (may be null).
/// On a stop signal it cancels the job: "interrupted: cancelled job N". When the scheduler
/// is lost and `reconnect` reaches it again, the client attaches again and follows on.
result<training_report> run_job(caf::actor_system& system, const caf::actor& scheduler,
                                const actors::job_submission& submission,
                                training_observer* observer, const client_limits& limits = {},
                                const scheduler_reconnector& reconnect = {});

/// Follows job `job_id`, submitted earlier, to its end (at once if it has ended). On a stop
/// signal it detaches and the job runs on. A lost scheduler is reached again as in run_job.
result<training_report> attach_job(caf::actor_system& system, const caf::actor& scheduler,
                                   std::uint64_t job_id, training_observer* observer,
                                   const client_limits& limits = {},
                                   const scheduler_reconnector& reconnect = {});

/// Cancels job `job_id`; errors when the scheduler knows no such job or it has ended.
result<void> cancel_job(caf::actor_system& system, const caf::actor& scheduler,
                        std::uint64_t job_id, const client_limits& limits = {});

/// The scheduler's nodes and jobs.
result<actors::cluster_status> query_status(caf::actor_system& system, const caf::actor& scheduler,
                                            const client_limits& limits = {});

} // namespace strom::runtime
