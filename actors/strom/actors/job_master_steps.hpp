#pragma once
// The job_master's steps, shared by the three files that make it up: job_master.cpp (the
// job's life: assignment, epochs and rounds, evaluation, the end), job_membership.cpp (nodes
// lost and joining: remap, makeup round, restore, pause) and job_checkpoints.cpp (checkpoints,
// and the resume after a scheduler restart). Internal to those files.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/errors.hpp"
#include "strom/actors/job_master.hpp"

namespace strom::actors::job_steps {

using self_ptr = caf::stateful_actor<job_master_state>*;

// -- job_master.cpp ---------------------------------------------------------------------------

double seconds_between(caf::actor_clock::time_point from, caf::actor_clock::time_point to);

bool in_job(const job_master_state& st, std::uint64_t node_id);

void report_status(self_ptr self, const job_master_setup& setup);

void fail_job(self_ptr self, const job_master_setup& setup, const caf::error& reason);

strom_error code_for(const caf::error& err, strom_error otherwise);

double seconds_of(caf::timespan span);

void start_round(self_ptr self, bool makeup);

void start_epoch(self_ptr self, const job_master_setup& setup);

void complete_when_counted(self_ptr self, const job_master_setup& setup);

void evaluate(self_ptr self, const job_master_setup& setup);

/// The epoch's training is done and `check` is its evaluation: record it, go on or finish.
void end_epoch(self_ptr self, const job_master_setup& setup, const epoch_check& check);

void end_round_when_done(self_ptr self, const job_master_setup& setup);

job_assignment assignment_for(const job_master_state& st, const job_master_setup& setup,
                              std::uint32_t rank, std::uint32_t workers,
                              std::uint32_t first_worker, std::uint32_t total_workers);

void begin_training(self_ptr self, const job_master_setup& setup);

/// Sends every node its assignment: rank, global worker ranks, the hub, the shards.
void assign(self_ptr self, const job_master_setup& setup);

// -- job_kvstore.cpp --------------------------------------------------------------------------

/// Whether `node_id` is one of the job's server nodes (a member with the server role).
bool is_server(const job_master_state& st, std::uint64_t node_id);

/// A server node joined while the job runs: it takes a replica of each key range whose chain
/// lost one (the end of the chain, filled by its predecessor's state), or, when none lacks
/// one, waits as a spare for the next server loss; false when the job is not a replicated
/// kvstore job in training.
bool take_server(self_ptr self, const job_master_setup& setup, const member_joined& joined);

/// Has every server node spawn its parameter_shards (a kvstore job), then assigns the job to
/// the worker nodes; a job without servers is assigned at once.
void serve_then_assign(self_ptr self, const job_master_setup& setup);

/// Tells every shard the workers of the round just planned (st.work).
void plan_shards_round(self_ptr self);

/// The shards stop waiting for a lost worker node's pushes.
void forget_on_shards(self_ptr self, std::uint64_t node_id);

/// A server node was lost: its key ranges go on on their next replicas (the chains are
/// rebuilt, the workers re-routed); a range with no replica left fails the job.
void lose_server(self_ptr self, const job_master_setup& setup, const member_lost& lost);

/// Adds the shards' counts to the report, then runs `next`.
void count_shards_then(self_ptr self, const job_master_setup& setup, std::function<void()> next);

// -- job_pipeline.cpp -------------------------------------------------------------------------

/// Places the job (setup.place): a job that fits none of its nodes fails; a pipeline job has
/// its stages spawned and linked, then trains; any other is served and assigned.
void place_then_start(self_ptr self, const job_master_setup& setup);

/// The epoch's figures start afresh: nothing trained, measured or reported in it yet (a stage
/// lost before it trains goes back to the epoch's start).
void begin_epoch_figures(pipeline_run& run);

/// A pipeline job's next epoch: the first stage is told to train it.
void run_pipeline_epoch(self_ptr self);

/// Tells every subnet its neighbours and the pipeline's generation; `linked` runs once all
/// answered (a stage's neighbour may reach it by another route than the job_master).
void link_stages(self_ptr self, const job_master_setup& setup, std::function<void()> linked);

/// Whether the running job's pipeline is still in `generation`: answers to requests made for
/// an older one (a split restored or abandoned meanwhile) no longer count.
bool pipeline_in_generation(self_ptr self, std::uint32_t generation);

/// Asks `node` to spawn stage `s`'s subnet (of the pipeline's generation); once it runs, it is
/// the stage's and `ready` runs. A node that cannot fails the job.
void assign_stage(self_ptr self, const job_master_setup& setup, std::uint32_t s,
                  const job_node& node, std::function<void()> ready);

/// The report's split (stage_layers, stage_nodes, predictions) from the pipeline now running.
void report_split(job_master_state& st);

/// Has node `node` connect to the nodes `peers` it does not reach directly yet (where they
/// publish their subnets), so that stage frames do not pass through the scheduler.
void connect_node(self_ptr self, std::uint64_t node, const std::vector<std::uint64_t>& peers);

/// Has stage `s`'s node connect to the nodes of `neighbours` (stages) directly, so that their
/// frames do not pass through the scheduler; until then they do.
void wire_stage(self_ptr self, std::uint32_t s, const std::vector<std::uint32_t>& neighbours);

/// A stage's holder keeps its snapshot (a point a restore can go back to).
void pipeline_snapshot_held(self_ptr self, const stage_snapshot_note& note);

// -- job_repartition.cpp ----------------------------------------------------------------------

/// A pipeline job's next epoch, after splitting its layers again when its nodes' measured
/// speeds drifted (then in a new generation of subnets); a job that cannot fails.
void start_pipeline_epoch(self_ptr self, const job_master_setup& setup);

/// A node was lost while the pipeline's layers were split again, before the new split took
/// their state: the new subnets end and the old split, whose subnets still hold it, runs on
/// (its lost stage is then restored as any other).
void abandon_repartition(self_ptr self);

/// A pipeline job lost a stage's node: the stage is re-spawned on a spare from its holder's
/// copy and the others go back to the same point; without a spare or a snapshot the job fails.
void restore_stage(self_ptr self, const job_master_setup& setup, const member_lost& lost);

/// A pipeline job's last stage reports an epoch's training or its evaluation.
void pipeline_epoch_ended(self_ptr self, const job_master_setup& setup,
                          const stage_epoch_end& ended);

// -- job_metrics.cpp --------------------------------------------------------------------------

/// Tells setup.metrics (if any) the job's figures: the epochs recorded, and the epoch under
/// way (its finished rounds and the current round's progress).
void publish_metrics(self_ptr self, const job_master_setup& setup);

// -- job_stall.cpp ----------------------------------------------------------------------------

/// Notes a node's progress report: the stall watch counts stillness from its last growth.
void note_progress(self_ptr self, const node_progress& progress);

/// The stall watch's tick: asks the nodes what their workers do once a node's steps stood
/// still for stall_warning, and judges their answers; it clears the verdict once all move.
void watch_stalls(self_ptr self, const job_master_setup& setup);

// -- job_membership.cpp -----------------------------------------------------------------------

void drop_joiner(self_ptr self, const job_master_setup& setup, std::uint64_t node,
                 const std::string& why);

void lose_member(self_ptr self, const job_master_setup& setup, const member_lost& lost);

std::size_t min_nodes(const job_master_setup& setup);

caf::timespan rejoin_timeout(const job_master_setup& setup);

void next_round(self_ptr self, const job_master_setup& setup, bool makeup);

bool take_joiner(self_ptr self, const job_master_setup& setup, const member_joined& joined);

// -- job_checkpoints.cpp ----------------------------------------------------------------------

bool checkpoint_due(const job_master_state& st, const job_master_setup& setup);

void take_checkpoint(self_ptr self, const job_master_setup& setup);

void resume_training(self_ptr self, const job_master_setup& setup);

void start_keeping(self_ptr self, const job_master_setup& setup);

} // namespace strom::actors::job_steps
