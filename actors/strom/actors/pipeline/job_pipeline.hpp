#pragma once
// A pipeline job's part of its job_master (job_pipeline.cpp: placing, linking and running the
// stages; job_repartition.cpp: splitting the layers again; job_stage_restore.cpp: restoring a
// lost stage): the pipeline's state and its steps.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_clock.hpp>

#include "strom/actors/job/job_master_fwd.hpp"
#include "strom/actors/job/job_placement.hpp"
#include "strom/actors/protocol/cluster.hpp"
#include "strom/actors/protocol/pipeline.hpp"

namespace strom::actors {

/// A pipeline job as its job_master runs it (job_pipeline.cpp).
/// The stage slots below count every copy's stages, copy by copy (copy r's stage s at
/// r * stages() + s); with one copy (the default) a slot is a stage.
struct pipeline_run {
  job_placement placement;
  std::vector<caf::actor> subnets;  ///< by slot, once ready
  std::vector<std::uint64_t> stage_nodes;  ///< by slot: the node running it
  std::size_t ready = 0;            ///< stages whose subnet answered
  std::vector<double> busy_seconds;  ///< by stage, over the epochs trained on this split
  std::uint64_t split_steps = 0;     ///< minibatches trained on this split, every copy's
  double train_seconds = 0.0;        ///< over the epochs trained on this split
  std::uint32_t generation = 0;      ///< grows with every stage restore and re-partition
  std::uint64_t fetch_token = 0;     ///< the stages' secret (stage_assignment::fetch_token)
  // -- re-partitioning (job_repartition.cpp) --
  std::vector<double> epoch_busy;    ///< by slot: this epoch's busy seconds
  std::vector<std::uint64_t> epoch_steps;  ///< by copy: this epoch's minibatches
  bool epoch_restored = false;  ///< a stage was restored this epoch: its times are partial
  /// The last measured epoch's busy seconds (by slot) and minibatches when they alone showed a
  /// drift, kept for the next epoch to confirm; empty when the last one showed none.
  std::vector<double> drift_busy;
  std::uint64_t drift_steps = 0;
  /// By node: the status (speed) its stages were placed with, corrected by measurement.
  std::map<std::uint64_t, node_status> assumed;
  /// By node: where it publishes its first subnet (the connection serves later ones too).
  std::map<std::uint64_t, std::string> node_endpoints;
  std::set<std::pair<std::uint64_t, std::uint64_t>> wired;  ///< node pairs told to connect
  /// While the layers are split again (job_repartition.cpp): the run as it was before, whose
  /// subnets still hold the state until every new stage's copy of it is held; null otherwise.
  std::shared_ptr<pipeline_run> replaced;
  bool split_linked = false;  ///< the new split's stages are linked (job_repartition.cpp)
  std::uint32_t link_round = 0;  ///< link_stages calls so far
  /// By stage: the snapshots its holder keeps (the latest stage_snapshots::held_kept).
  std::vector<std::vector<stage_snapshot_note>> held;
  /// By stage: the snapshots it took and keeps (the latest stage_snapshots::own_kept), which it
  /// can roll back to even when the copies its holder kept were lost with the holder.
  std::vector<std::vector<stage_snapshot_note>> taken;
  bool trained = false;  ///< the current epoch's training has ended (its evaluation runs)
  std::uint32_t copies_trained = 0;  ///< copies whose share of the epoch ended
  /// By copy: what its share of the epoch added up to, once ended (a restore that goes back
  /// into the epoch withdraws it).
  std::vector<std::optional<stage_epoch_end>> reported;
  std::optional<caf::actor_clock::time_point> restoring;  ///< since the loss a restore answers

  /// Stages of one copy of the pipeline.
  std::uint32_t stages() const noexcept {
    return static_cast<std::uint32_t>(placement.stages.size() / placement.pipelines);
  }
};

} // namespace strom::actors

namespace strom::actors::job_steps {

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

/// Whether `round` is still the latest link_stages: a stage lost before the answers came links
/// the stages again.
bool linking_round(self_ptr self, std::uint32_t round);

/// Whether the running job's pipeline is still in `generation`: answers to requests made for
/// an older one (a split restored or abandoned meanwhile) no longer count.
bool pipeline_in_generation(self_ptr self, std::uint32_t generation);

/// A stage's subnet runs (before the first epoch): once every stage's does, they are wired
/// and linked, and the first epoch starts.
void stage_spawned(self_ptr self, const job_master_setup& setup);

/// Asks `node` to spawn stage `s`'s subnet (of the pipeline's generation), `from_start` with
/// the model this run of the job began with (a resume's checkpoint), else with the job's
/// initial one that a snapshot then replaces; once it runs, it is the stage's and `ready` runs.
/// A node that cannot fails the job.
void assign_stage(self_ptr self, const job_master_setup& setup, std::uint32_t s,
                  const job_node& node, bool from_start, std::function<void()> ready);

/// The report's split (stage_layers, stage_nodes, predictions) from the pipeline now running.
void report_split(job_master_state& st);

/// Has node `node` connect to the nodes `peers` it does not reach directly yet (where they
/// publish their subnets), so that stage frames do not pass through the scheduler.
void connect_node(self_ptr self, std::uint64_t node, const std::vector<std::uint64_t>& peers);

/// Has stage `s`'s node connect to the nodes of `neighbours` (stages) directly, so that their
/// frames do not pass through the scheduler; until then they do.
void wire_stage(self_ptr self, std::uint32_t s, const std::vector<std::uint32_t>& neighbours);

/// A stage's holder keeps its snapshot (a point a restore can go back to); the old split's
/// holders too while the layers are split again.
void pipeline_snapshot_held(self_ptr self, const stage_snapshot_note& note);

/// The new split's stages are linked and every one's copy of its state is held: the old
/// split's subnets end and the epoch starts on the new one. Nothing before that.
void start_new_split_once_held(self_ptr self);

/// A pipeline job's next epoch, after splitting its layers again when its nodes' measured
/// speeds drifted (then in a new generation of subnets); a job that cannot fails.
void start_pipeline_epoch(self_ptr self, const job_master_setup& setup);

/// A node was lost while the pipeline's layers were split again, before every new stage's copy
/// of its state was held: the new subnets end and the old split, whose subnets still hold it, runs on
/// (its lost stage is then restored as any other).
void abandon_repartition(self_ptr self);

/// A pipeline job lost a stage's node: the stage is re-spawned on a spare from its holder's
/// copy and the others go back to the same point; without a spare or a snapshot the job fails.
/// Before the first epoch every stage starts again, the lost one's on a spare.
void restore_stage(self_ptr self, const job_master_setup& setup, const member_lost& lost);

/// A pipeline job's last stage reports an epoch's training or its evaluation.
void pipeline_epoch_ended(self_ptr self, const job_master_setup& setup,
                          const stage_epoch_end& ended);

} // namespace strom::actors::job_steps
