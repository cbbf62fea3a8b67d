#pragma once
// Training progress on its way up: trainers report steps, epochs and drains to their node
// agent, which reports the node's progress, rounds and sharing figures to the scheduler.

#include <cstdint>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "strom/actors/protocol/sharing.hpp"
#include "strom/actors/job/training_report.hpp"

namespace strom::actors {

/// Progress of one trainer since its previous step_report (of the same epoch).
struct step_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;    ///< 0-based
  std::uint64_t batches = 0;  ///< steps since the previous report
  double loss_sum = 0.0;      ///< sum of their batches' mean losses
  std::uint64_t samples = 0;  ///< samples in their batches
};

template <class F>
typename F::result_type inspect(F& f, step_report& x) {
  return f(caf::meta::type_name("step_report"), x.worker, x.epoch, x.batches, x.loss_sum,
           x.samples);
}

/// A trainer went through its whole partition for one epoch.
struct epoch_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;     ///< 0-based
  double loss_sum = 0.0;       ///< sum of the batches' mean losses
  std::uint64_t batches = 0;
  std::uint64_t samples = 0;
  std::uint64_t iteration = 0; ///< the replica's updater steps after the epoch
};

template <class F>
typename F::result_type inspect(F& f, epoch_report& x) {
  return f(caf::meta::type_name("epoch_report"), x.worker, x.epoch, x.loss_sum, x.batches,
           x.samples, x.iteration);
}

/// A trainer applied every frame of an epoch (the drain marker reached it).
struct drain_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;                      ///< 0-based
  std::uint64_t updates_applied = 0;            ///< frames applied so far, in total
  std::uint64_t duplicate_updates_applied = 0;  ///< frames seen twice (must stay 0)
  std::uint64_t frames_rejected = 0;            ///< frames that did not fit the replica
};

template <class F>
typename F::result_type inspect(F& f, drain_report& x) {
  return f(caf::meta::type_name("drain_report"), x.worker, x.epoch, x.updates_applied,
           x.duplicate_updates_applied, x.frames_rejected);
}

/// node_agent -> scheduler, a few times a second: training progress in the current epoch.
struct node_progress {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::uint32_t round = 0;
  std::uint64_t batches = 0;   ///< this round so far, all the node's workers
  std::uint64_t samples = 0;
  double loss_sum = 0.0;
  std::uint64_t job_samples = 0;  ///< every round of the job so far
  framing_stats sent;             ///< what the node framed in the job so far
  /// Frame bytes its relay took from peers in the job, as of the relay's last count.
  std::uint64_t bytes_received = 0;
};

template <class F>
typename F::result_type inspect(F& f, node_progress& x) {
  return f(caf::meta::type_name("node_progress"), x.job_id, x.node_id, x.round, x.batches,
           x.samples, x.loss_sum, x.job_samples, x.sent, x.bytes_received);
}

/// node_agent -> scheduler: the node trained and drained a round.
struct node_epoch_report {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::uint32_t round = 0;
  epoch_totals totals;          ///< summed over the node's workers
  std::vector<std::uint64_t> steps;  ///< by worker slot: batches trained (fewer after a cut)
  std::uint64_t iteration = 0;  ///< updater steps of the node's first replica
  drain_report drained;         ///< frames applied so far, summed over the node's workers
};

template <class F>
typename F::result_type inspect(F& f, node_epoch_report& x) {
  return f(caf::meta::type_name("node_epoch_report"), x.job_id, x.node_id, x.round, x.totals,
           x.steps, x.iteration, x.drained);
}

/// node_agent -> scheduler at the end of a job: what the node's sharing actors counted.
struct node_sharing_report {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  framing_stats sent;
  relay_stats relayed;
};

template <class F>
typename F::result_type inspect(F& f, node_sharing_report& x) {
  return f(caf::meta::type_name("node_sharing_report"), x.job_id, x.node_id, x.sent, x.relayed);
}

} // namespace strom::actors
