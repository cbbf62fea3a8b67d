#pragma once
// Clients and the scheduler: a client submits a job (or attaches, or cancels) and gets
// submit_reply, then the job's progress, epochs and end; a status request gets the cluster's
// nodes and jobs.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "strom/actors/job/progress.hpp"
#include "strom/actors/protocol/cluster.hpp"
#include "strom/actors/protocol/frame_inspection.hpp"
#include "strom/actors/job/training_report.hpp"

namespace strom::actors {

/// Where a job submitted with --resume goes on from: a checkpoint's model as an encoded
/// replica snapshot (schema/snapshot.capnp), which every node restores before the first step
/// (job_checkpoints.hpp), and how far training had got.
struct job_resume {
  std::uint32_t epochs_done = 0;  ///< 0: the job starts from the beginning
  training_report report;         ///< as of the checkpoint: iterations, samples, test figures
  compute::frame snapshot;        ///< empty when epochs_done is 0
};

template <class F>
typename F::result_type inspect(F& f, job_resume& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("job_resume"), x.epochs_done, x.report, x.snapshot.size());
  } else {
    if (auto err = f(x.epochs_done, x.report))
      return err;
    // A job that starts from the beginning carries no snapshot.
    return detail::inspect_frame(f, "snapshot", x.snapshot, compute::max_frame_bytes,
                                 x.epochs_done == 0);
  }
}

/// client -> scheduler: a job to run. The job travels as Cap'n Proto text with absolute data
/// paths: every node reads the data at the same paths.
struct job_submission {
  std::string job_text;
  std::string source;          ///< where the job came from, for messages
  /// The run's checkpoint folder on the first node (runtime/job/checkpoint_runs.hpp);
  /// empty: no checkpoint.
  std::string checkpoint_dir;
  std::uint32_t nodes = 0;     ///< nodes required; 0: every node that has joined
  /// Below this many live nodes the job pauses for nodes to join (0 counts as 1).
  std::uint32_t min_nodes = 0;
  /// The job grows to nodes that join while it runs up to this many; 0: `nodes` when set,
  /// else no bound.
  std::uint32_t max_nodes = 0;
  /// How long a paused job waits for nodes to join before it fails; 0: the default.
  std::uint64_t rejoin_timeout_ms = 0;
  std::string topology = "plain";  ///< "plain", "mesh" or "auto" (topology.hpp)
  std::uint32_t fanout = 8;        ///< children a mesh node has at most, 1..max_fanout
  /// A kvstore job: it also takes server nodes, `servers` of them (0: every free one).
  bool kvstore = false;
  std::uint32_t servers = 0;
  std::uint32_t replicas = 1;  ///< servers that hold each key range (chain replication)
  /// A pipeline job (distributed.mode pipeline): its worker nodes run its stages.
  bool pipeline = false;
  /// A parameter-averaging job: its nodes' relays form a tree whatever `topology` says.
  bool averaging = false;
  std::uint32_t keep_checkpoints = 0;  ///< epoch checkpoints the run keeps; 0: every one
  /// Times a job that lost a node it cannot go on without starts again from its latest
  /// checkpoint (torchrun's --max-restarts); only where the scheduler keeps checkpoints.
  std::uint32_t max_restarts = 3;
  job_resume resume;  ///< strom train/submit --resume: the checkpoint it goes on from
};

template <class F>
typename F::result_type inspect(F& f, job_submission& x) {
  return f(caf::meta::type_name("job_submission"), x.job_text, x.source, x.checkpoint_dir,
           x.nodes, x.min_nodes, x.max_nodes, x.rejoin_timeout_ms, x.topology, x.fanout,
           x.kvstore, x.servers, x.replicas, x.pipeline, x.averaging, x.keep_checkpoints,
           x.max_restarts, x.resume);
}

/// scheduler -> client: the answer to a job_submission, an attach or a cancel.
struct submit_reply {
  bool accepted = false;
  std::uint64_t job_id = 0;
  std::string reason;  ///< why the request was refused
};

template <class F>
typename F::result_type inspect(F& f, submit_reply& x) {
  return f(caf::meta::type_name("submit_reply"), x.accepted, x.job_id, x.reason);
}

/// scheduler -> clients: progress of a job.
struct job_progress {
  std::uint64_t job_id = 0;
  step_progress progress;
  cluster_figures cluster;  ///< its nodes' figures and membership changes so far
};

template <class F>
typename F::result_type inspect(F& f, job_progress& x) {
  return f(caf::meta::type_name("job_progress"), x.job_id, x.progress, x.cluster);
}

/// scheduler -> clients: a job finished an epoch.
struct job_epoch {
  std::uint64_t job_id = 0;
  epoch_summary summary;
};

template <class F>
typename F::result_type inspect(F& f, job_epoch& x) {
  return f(caf::meta::type_name("job_epoch"), x.job_id, x.summary);
}

/// scheduler -> clients: a job ended.
struct job_finished {
  std::uint64_t job_id = 0;
  bool succeeded = false;
  bool cancelled = false;  ///< ended by a cancel request (then not succeeded)
  std::string failure;     ///< why it failed or who cancelled it
  training_report report;
};

template <class F>
typename F::result_type inspect(F& f, job_finished& x) {
  return f(caf::meta::type_name("job_finished"), x.job_id, x.succeeded, x.cancelled, x.failure,
           x.report);
}

/// One job as the scheduler sees it.
struct job_status {
  std::uint64_t job_id = 0;
  std::string name;
  /// "preparing", "training", "succeeded", "failed", "cancelled", or "restarting" (stopping
  /// to start again from its latest checkpoint; then "resuming" while it waits for nodes)
  std::string state;
  std::uint32_t epoch = 0;    ///< epochs finished
  std::uint32_t epochs = 0;
  std::string failure;
  double test_accuracy = -1.0;
  /// A mesh job's tree, each parent and its children ("mesh, fanout 2: 1 > 2 3; 2 > 4");
  /// empty for plain.
  std::string topology;
  std::uint32_t nodes = 0;           ///< live nodes training it
  std::uint32_t nodes_lost = 0;      ///< while it ran
  std::uint32_t nodes_restored = 0;
  std::uint32_t nodes_joined = 0;
  /// Set while the job's steps wait longer than the stall warning: whom they wait for, what
  /// it last did and for how long (stall_watch.hpp); empty otherwise.
  std::string stall;
};

template <class F>
typename F::result_type inspect(F& f, job_status& x) {
  return f(caf::meta::type_name("job_status"), x.job_id, x.name, x.state, x.epoch, x.epochs,
           x.failure, x.test_accuracy, x.topology, x.nodes, x.nodes_lost, x.nodes_restored,
           x.nodes_joined, x.stall);
}

/// scheduler -> (status_atom) requester.
struct cluster_status {
  std::vector<node_status> nodes;
  std::vector<job_status> jobs;
  std::uint64_t membership_epoch = 0;  ///< grows by one with every join, loss or leave
};

template <class F>
typename F::result_type inspect(F& f, cluster_status& x) {
  return f(caf::meta::type_name("cluster_status"), x.nodes, x.jobs, x.membership_epoch);
}

} // namespace strom::actors
