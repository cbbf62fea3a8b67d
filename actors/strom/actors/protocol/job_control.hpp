#pragma once
// Running a job on its nodes: the scheduler and job_master assign a job to node agents, which
// answer node_ready; the job_master plans each round's work, asks for epoch checks and worker
// activity; node agents report failures and the job_master reports checkpoints.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include "strom/actors/protocol/kvstore.hpp"
#include "strom/actors/job/training_report.hpp"

namespace strom::actors {

/// What one trainer trains in one round. A round is an epoch's pass over the training set by
/// the job's current nodes, or a makeup pass over the share a lost node left untrained; frames,
/// clocks and drain markers count rounds (in their `epoch` fields), the data order counts
/// epochs.
struct round_work {
  std::uint32_t round = 0;
  std::uint32_t epoch = 0;   ///< 0-based data epoch: seeds the order of a partition
  std::uint32_t rank = 0;    ///< partition `rank` of `ranks`, in the epoch's order
  std::uint32_t ranks = 1;   ///< 0: a makeup pass over `indices` instead
  std::vector<std::uint32_t> indices;  ///< a makeup pass: these samples, in this order
  std::vector<std::uint64_t> origins;  ///< the nodes whose frames and drains the round waits for
  /// Steps every worker of the round takes (the fewest of any): parameter averaging averages
  /// up to there, so every worker contributes to the same averages.
  std::uint64_t common_steps = 0;
  /// Steps the round's busiest worker takes (the most of any): a dist_sync kvstore node whose
  /// workers all ran out of batches sooner joins the later steps (kv_push of weight 0).
  std::uint64_t most_steps = 0;
};

template <class F>
typename F::result_type inspect(F& f, round_work& x) {
  return f(caf::meta::type_name("round_work"), x.round, x.epoch, x.rank, x.ranks, x.indices,
           x.origins, x.common_steps, x.most_steps);
}

/// job_master -> node_agent: the node's trainers' work for the next round, by worker slot.
struct round_plan {
  std::uint64_t job_id = 0;
  std::uint32_t round = 0;
  std::vector<round_work> workers;
};

template <class F>
typename F::result_type inspect(F& f, round_plan& x) {
  return f(caf::meta::type_name("round_plan"), x.job_id, x.round, x.workers);
}

/// scheduler -> node_agent: train a job as one of its nodes.
struct job_assignment {
  std::uint64_t job_id = 0;
  std::string job_text;
  std::string source;
  std::string checkpoint_dir;  ///< the run's checkpoint folder; set for rank 0 only
  std::uint32_t keep_checkpoints = 0;  ///< epoch checkpoints the run keeps; 0: every one
  std::uint32_t rank = 0;      ///< this node's index among the job's nodes
  std::uint32_t workers = 1;   ///< trainers this node runs
  std::uint32_t first_worker = 0;   ///< global rank of the node's first worker
  std::uint32_t total_workers = 1;  ///< workers over all nodes (data partitions)
  std::vector<std::uint64_t> origins;  ///< node ids of every node that sends frames
  caf::actor hub;  ///< the relay every node sends its frames to (plain); null in a mesh
  std::vector<kv_shard_entry> shards;  ///< a kvstore job's key ranges and their shards
  std::vector<std::string> server_endpoints;  ///< where to connect to the servers directly
};

template <class F>
typename F::result_type inspect(F& f, job_assignment& x) {
  return f(caf::meta::type_name("job_assignment"), x.job_id, x.job_text, x.source,
           x.checkpoint_dir, x.keep_checkpoints, x.rank, x.workers, x.first_worker,
           x.total_workers, x.origins, x.hub,
           x.shards, x.server_endpoints);
}

/// node_agent -> scheduler: the job's actors run and wait for the first epoch.
struct node_ready {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  caf::actor relay;  ///< the node's relay, a peer of the hub
  std::string job_name;
  std::uint32_t epochs = 0;
  std::uint64_t batches_per_epoch = 0;  ///< over the node's workers
  std::uint64_t samples_per_epoch = 0;  ///< the node's share of the training set
  // What the job_master needs to assign the data: every node has the same.
  std::uint64_t train_samples = 0;  ///< samples in the training set
  std::uint32_t batch_size = 1;
  std::uint32_t workers = 1;        ///< trainers on the node
  std::uint64_t seed = 0;           ///< the job seed (epoch orders)
  bool shuffle = true;
  /// HOST:PORT where the node's relay is published for its mesh neighbours (the node's
  /// advertised address); empty where the node publishes none (a lone in-process node).
  std::string relay_endpoint{};
  std::uint32_t averaging_frequency = 0;  ///< parameter averaging's; 0: updates are shared
  std::string mode = "shared";            ///< the job's training mode
  std::string kvstore{};                  ///< kvstore mode's "dist_sync" or "dist_async"
  std::string device = "cpu";             ///< where its workers' steps run (replica::device_name)
};

template <class F>
typename F::result_type inspect(F& f, node_ready& x) {
  return f(caf::meta::type_name("node_ready"), x.job_id, x.node_id, x.relay, x.job_name,
           x.epochs, x.batches_per_epoch, x.samples_per_epoch, x.train_samples, x.batch_size,
           x.workers, x.seed, x.shuffle, x.relay_endpoint, x.averaging_frequency, x.mode,
           x.kvstore, x.device);
}

/// node_agent -> job_master: the answer to (evaluate_atom, job_id, epoch), what the node did
/// with its first replica after the epoch while its trainers were idle.
struct epoch_check {
  test_result tested;      ///< accuracy -1 without a test set
  std::string checkpoint;  ///< where the model was saved, empty if nowhere
};

template <class F>
typename F::result_type inspect(F& f, epoch_check& x) {
  return f(caf::meta::type_name("epoch_check"), x.tested, x.checkpoint);
}

/// node_agent -> scheduler: the job cannot go on on this node.
struct node_failure {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::string message;
};

template <class F>
typename F::result_type inspect(F& f, node_failure& x) {
  return f(caf::meta::type_name("node_failure"), x.job_id, x.node_id, x.message);
}

/// trainer -> the requester of stall_atom: what the worker does in its round, for the stall
/// watch (stall_watch.hpp).
struct worker_activity {
  std::uint32_t worker = 0;
  std::uint32_t round = 0;
  std::uint64_t steps = 0;   ///< steps taken in the round
  bool answered = true;      ///< false: the worker did not answer in time (busy in a step)
  bool waiting = false;      ///< parked: the staleness bound or an average holds its next step
  bool finished = false;     ///< trained its share of the round, waits for the drains
  /// Origins (node ids) whose frames or drain marker it waits for.
  std::vector<std::uint64_t> waiting_for;
};

template <class F>
typename F::result_type inspect(F& f, worker_activity& x) {
  return f(caf::meta::type_name("worker_activity"), x.worker, x.round, x.steps, x.answered,
           x.waiting, x.finished, x.waiting_for);
}

/// node_agent -> job_master: the answer to (stall_atom, job_id), its workers' activity.
struct node_activity {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::vector<worker_activity> workers;  ///< by worker slot
};

template <class F>
typename F::result_type inspect(F& f, node_activity& x) {
  return f(caf::meta::type_name("node_activity"), x.job_id, x.node_id, x.workers);
}

/// job_master -> scheduler: the job's checkpoint after `epochs_done` epochs is saved; the
/// scheduler keeps this with the job (scheduler_store.hpp).
struct job_checkpointed {
  std::uint64_t job_id = 0;
  std::uint32_t epochs_done = 0;
  training_report report;
};

template <class F>
typename F::result_type inspect(F& f, job_checkpointed& x) {
  return f(caf::meta::type_name("job_checkpointed"), x.job_id, x.epochs_done, x.report);
}

} // namespace strom::actors
