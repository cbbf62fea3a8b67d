// The job_master's part in placing a job and in running a pipeline job (mode pipeline, issue
// #20). Placing comes first for every job: setup.place checks the nodes' memory budgets and,
// for a pipeline job, splits the network into stages. Each stage's node then spawns its
// subnet (stage_assignment); once all answered they are linked (stage_links) and the epochs
// run: the first stage is told to train one (stage_run), the last reports its end
// (stage_epoch_end), then the same for the evaluation, and the epoch is recorded like any
// other mode's (end_epoch). A stage's node lost is restored (job_stage_restore.cpp).
//
// With --pipelines R above 1 every copy of the pipeline runs on nodes of its own, each copy's
// first stage trains its share of every epoch, the copies of a stage are linked to each other
// to share their updates (subnet.hpp), the epoch ends once every copy's has, and copy 1 alone
// evaluates.

#include "strom/actors/pipeline/job_pipeline.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/job/job_master_steps.hpp"
#include "strom/actors/pipeline/stage_snapshots.hpp"
#include "strom/log.hpp"

namespace strom::actors::job_steps {

namespace {

/// GPipe's bubble: the idle share of K stages over M micro-batches, (K-1)/(M+K-1).
double ideal_bubble(std::size_t stages, std::uint32_t micro_batches) {
  const double k = static_cast<double>(stages);
  return (k - 1.0) / (static_cast<double>(micro_batches) + k - 1.0);
}

/// The job's keeper fetches the network the first stage kept at the epoch's end into the
/// scheduler's store; then the epoch is recorded, and the scheduler learns how far the job
/// got (job_checkpoints.hpp). A fetch that fails is logged and the epoch ends all the same.
void keep_in_store(self_ptr self, const job_master_setup& setup, const test_result& tested,
                   std::string path, std::uint32_t generation) {
  auto& st = self->state;
  const auto first = caf::actor_cast<caf::actor>(st.pipeline->subnets.front());
  const auto epoch = st.status.epoch;
  self->request(st.checkpoints.keeper, setup.timeouts.restore_timeout, checkpoint_atom_v,
                st.status.job_id, first)
    .then(
      [self, setup, tested, path, generation, epoch](const snapshot_sent& sent) {
        if (!pipeline_in_generation(self, generation))
          return;  // a restore took the pipeline back: the epoch ends again later
        end_epoch(self, setup, epoch_check{tested, path});
        if (!self->state.outcome)  // recorded with the epoch in the report
          checkpointed(self, setup, epoch + 1, sent.bytes);
      },
      [self, setup, tested, path, generation, epoch](caf::error& err) {
        if (!pipeline_in_generation(self, generation))
          return;
        log::warning("job_master: job {} took no checkpoint after epoch {}: {}",
                     self->state.status.job_id, epoch + 1, error_text(self->system(), err));
        end_epoch(self, setup, epoch_check{tested, path});
      });
}

/// After an epoch's evaluation, every stage idle: when the run keeps checkpoints (in its
/// folder, or the scheduler's store) the first stage puts the whole network's together
/// (stage_checkpoint), then the epoch is recorded. A checkpoint that fails is logged and
/// training goes on, as in the other modes.
void checkpoint_then_end(self_ptr self, const job_master_setup& setup, const test_result& tested) {
  auto& st = self->state;
  const auto& run = *st.pipeline;
  const bool to_store = setup.store && st.checkpoints.keeper;
  if (setup.submission.checkpoint_dir.empty() && !to_store)
    return end_epoch(self, setup, epoch_check{tested, {}});
  if (!run.placement.column_plans.empty()) {
    if (st.status.epoch == 0)
      log::warning("job_master: job {} saves no checkpoints: its pipeline splits dense layers "
                   "by columns, which a checkpoint cannot put together yet",
                   st.status.job_id);
    return end_epoch(self, setup, epoch_check{tested, {}});
  }
  stage_checkpoint request;
  for (std::uint32_t s = 0; s < run.stages(); ++s) {  // the first copy's stages
    request.sources.push_back(run.subnets[s]);
    request.first_layers.push_back(run.placement.stages[s].first_layer);
    request.end_layers.push_back(run.placement.stages[s].end_layer);
  }
  request.generation = run.generation;
  request.epochs = st.status.epoch + 1;
  request.test_accuracy = tested.accuracy;
  request.test_loss = tested.loss;
  request.folder = setup.submission.checkpoint_dir;
  request.keep = setup.submission.keep_checkpoints;
  request.nodes = static_cast<std::uint32_t>(st.nodes.size());
  if (to_store)
    request.keeper = caf::actor_cast<caf::actor>(st.checkpoints.keeper);
  const auto generation = run.generation;
  const auto epoch = st.status.epoch;
  self->request(run.subnets.front(), setup.timeouts.restore_timeout, std::move(request))
    .then(
      [self, setup, tested, generation, to_store](std::string& path) {
        if (self->state.outcome || !pipeline_in_generation(self, generation))
          return;  // a restore took the pipeline back: the epoch ends again later
        if (to_store)
          return keep_in_store(self, setup, tested, std::move(path), generation);
        end_epoch(self, setup, epoch_check{tested, std::move(path)});
      },
      [self, setup, tested, generation, epoch](caf::error& err) {
        if (self->state.outcome || !pipeline_in_generation(self, generation))
          return;
        log::warning("job_master: job {} took no checkpoint after epoch {}: {}",
                     self->state.status.job_id, epoch + 1, error_text(self->system(), err));
        end_epoch(self, setup, epoch_check{tested, {}});
      });
}

/// Every subnet knows its neighbours: the first epoch starts.
void begin_pipeline(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  const auto& run = *st.pipeline;
  st.status.state = "training";
  report_status(self, setup);
  log::info("job_master: job {} ({}) {} as a pipeline of {} stages in {} copies, {} "
            "micro-batches a minibatch", st.status.job_id, st.status.name,
            st.status.epoch == 0 ? "starts" : fmt::format("resumes at epoch {}", st.status.epoch + 1),
            run.stages(), run.placement.pipelines, run.placement.micro_batches);
  start_epoch(self, setup);
}

/// How messages name the stage in slot `slot`: "stage S", or "stage S of copy R".
std::string slot_name(const pipeline_run& run, std::size_t slot) {
  const auto stages = run.stages();
  if (run.placement.pipelines == 1)
    return fmt::format("stage {}", slot + 1);
  return fmt::format("stage {} of copy {}", slot % stages + 1, slot / stages + 1);
}

/// The copy whose last stage is `sender`, if any.
std::optional<std::uint32_t> copy_ending_at(const pipeline_run& run,
                                            const caf::strong_actor_ptr& sender) {
  const auto stages = run.stages();
  for (std::uint32_t r = 0; r < run.placement.pipelines; ++r)
    if (sender == run.subnets[r * stages + stages - 1].address())
      return r;
  return std::nullopt;
}

} // namespace

void link_stages(self_ptr self, const job_master_setup& setup, std::function<void()> linked) {
  auto& st = self->state;
  const auto& run = *st.pipeline;
  const auto& subnets = run.subnets;
  const auto stages = run.stages();
  const auto copies = run.placement.pipelines;
  auto left = std::make_shared<std::size_t>(subnets.size());
  // A stage lost meanwhile links them again: the answers to these no longer count then.
  const auto round = ++st.pipeline->link_round;
  for (std::size_t slot = 0; slot < subnets.size(); ++slot) {
    const auto s = slot % stages;
    stage_links links{s > 0 ? subnets[slot - 1] : caf::actor{},
                      s + 1 < stages ? subnets[slot + 1] : caf::actor{},
                      caf::actor_cast<caf::actor>(self), run.generation};
    if (copies > 1)
      for (std::uint32_t r = 0; r < copies; ++r)
        links.peers.push_back(r * stages + s == slot ? caf::actor{} : subnets[r * stages + s]);
    // Owed by the subnet's node: a node lost meanwhile is decided by its loss (the stages
    // linked again, or the job's end), not by this request's error.
    request_while_alive(self, st.awaiting, run.stage_nodes[slot], subnets[slot],
                        setup.timeouts.answer_timeout, std::move(links))
      .then(
        [self, left, linked, round](wired_atom) {
          if (linking_round(self, round) && --*left == 0)
            linked();
        },
        [self, setup, name = slot_name(run, slot), round](caf::error& err) {
          if (!linking_round(self, round))
            return;
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::node_failed),
                              fmt::format("pipeline {} did not take its neighbours: {}", name,
                                          error_text(self->system(), err))));
        });
  }
}

bool linking_round(self_ptr self, std::uint32_t round) {
  const auto& st = self->state;
  return !st.outcome && st.pipeline && st.pipeline->link_round == round;
}

bool pipeline_in_generation(self_ptr self, std::uint32_t generation) {
  const auto& st = self->state;
  return !st.outcome && st.pipeline && st.pipeline->generation == generation;
}

void assign_stage(self_ptr self, const job_master_setup& setup, std::uint32_t s,
                  const job_node& node, bool from_start, std::function<void()> ready) {
  auto& st = self->state;
  const auto& run = *st.pipeline;
  const auto& stage = run.placement.stages[s];
  const auto node_id = node.status.node_id;
  stage_assignment work{st.status.job_id,
                        setup.submission.job_text,
                        setup.submission.source,
                        s % run.stages(),
                        run.stages(),
                        stage.first_layer,
                        stage.end_layer,
                        run.placement.micro_batches,
                        run.generation,
                        s / run.stages(),
                        run.placement.pipelines,
                        run.placement.column_plans,
                        from_start ? st.checkpoints.resumed : job_resume{},
                        run.fetch_token};
  const auto current = [self, generation = run.generation] {
    return pipeline_in_generation(self, generation);
  };
  request_while_alive(self, st.awaiting, node_id, node.agent, setup.timeouts.prepare_timeout,
                      std::move(work))
    .then(
      [self, s, node_id, ready, current, agent = node.agent](const stage_ready& answer) {
        if (!current()) {
          if (!self->state.outcome)  // a subnet of the abandoned split: it ends
            self->send(agent, stage_retire{self->state.status.job_id, {answer.subnet}});
          return;
        }
        auto& st = self->state;
        st.last_heard = self->clock().now();
        auto& run = *st.pipeline;
        run.subnets[s] = answer.subnet;
        // A node publishes its first subnet only; the connection serves every later one.
        if (!answer.endpoint.empty())
          run.node_endpoints[node_id] = answer.endpoint;
        ready();
      },
      [self, setup, s, node_id, current, name = slot_name(run, s)](caf::error& err) {
        // A lost node's request ends after its loss was handled: the slot may have another
        // node now.
        if (!current() || self->state.pipeline->stage_nodes[s] != node_id)
          return;
        fail_job(self, setup,
                 make_error(code_for(err, strom_error::bad_job),
                            fmt::format("node {} did not start pipeline {}: {}", node_id, name,
                                        error_text(self->system(), err))));
      });
}

void stage_spawned(self_ptr self, const job_master_setup& setup) {
  auto& run = *self->state.pipeline;
  if (++run.ready < run.subnets.size())
    return;
  // Each slot's node connects to its upstream neighbour's and to its copies' before it.
  const auto stages = run.stages();
  for (std::uint32_t t = 0; t < run.subnets.size(); ++t) {
    std::vector<std::uint32_t> earlier;
    if (t % stages > 0)
      earlier.push_back(t - 1);
    for (std::uint32_t copy = t % stages; copy < t; copy += stages)
      earlier.push_back(copy);
    wire_stage(self, t, earlier);
  }
  link_stages(self, setup, [self, setup] { begin_pipeline(self, setup); });
}

namespace {

/// Asks each stage's node to spawn its subnet; once all run they are linked and train.
void spawn_stages(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  const auto slots = run.placement.stages.size();
  run.subnets.assign(slots, caf::actor{});
  run.held.assign(slots, {});
  run.taken.assign(slots, {});
  for (std::uint32_t s = 0; s < slots; ++s)
    assign_stage(self, setup, s, st.members.at(run.stage_nodes[s]), true,
                 [self, setup] { stage_spawned(self, setup); });
}

/// A pipeline job's report before its first epoch: the split, the predictions, GPipe's bubble.
void start_pipeline(self_ptr self, const job_master_setup& setup, job_placement placement) {
  auto& st = self->state;
  st.status.name = st.report.job = placement.job_name;
  st.status.epochs = st.report.epochs = placement.epochs;
  st.report.mode = "pipeline";
  st.report.nodes = static_cast<std::uint32_t>(placement.stages.size());
  st.report.workers = st.report.nodes;
  const auto stages = static_cast<std::uint32_t>(placement.stages.size() / placement.pipelines);
  auto& summary = st.report.pipeline;
  summary.stages = stages;
  summary.micro_batches = placement.micro_batches;
  summary.pipelines = placement.pipelines;
  summary.bubble_fraction_ideal = ideal_bubble(stages, placement.micro_batches);
  for (const auto& plan : placement.column_plans) {
    summary.column_splits.push_back({plan.layer});
    summary.column_splits.back().insert(summary.column_splits.back().end(),
                                        plan.bounds.begin(), plan.bounds.end());
  }
  // The job's nodes are its stages' (a node beyond --stages idles and is not asked to stop).
  st.nodes.clear();
  for (const auto& stage : placement.stages)
    st.nodes.push_back(setup.nodes[stage.node].status.node_id);
  auto& run = st.pipeline.emplace();
  std::random_device entropy;
  run.fetch_token = (std::uint64_t{entropy()} << 32) | entropy();
  run.stage_nodes = st.nodes;
  run.placement = std::move(placement);
  report_split(st);
  run.busy_seconds.assign(stages, 0.0);
  for (const auto& node : setup.nodes)
    run.assumed[node.status.node_id] = node.status;
  spawn_stages(self, setup);
}

} // namespace

void place_then_start(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (!setup.place) {
    if (setup.submission.pipeline)
      return fail_job(self, setup,
                      make_error(strom_error::bad_job,
                                 "this scheduler cannot place pipeline jobs (no placer)"));
    return serve_then_assign(self, setup);
  }
  std::vector<node_status> nodes;
  for (const auto& node : setup.nodes)
    nodes.push_back(node.status);
  auto placed = setup.place(setup.submission, nodes);
  if (!placed)
    return fail_job(self, setup, make_error(strom_error::bad_job, placed.err().message));
  if (placed->stages.empty())
    return serve_then_assign(self, setup);
  log::info("job_master: job {} places {} pipeline stages", st.status.job_id,
            placed->stages.size());
  start_pipeline(self, setup, std::move(*placed));
}

void connect_node(self_ptr self, std::uint64_t node, const std::vector<std::uint64_t>& peers) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  chain_wiring wiring{st.status.job_id, {}, {}};
  for (auto peer : peers) {
    const auto pair = std::minmax(node, peer);
    const auto published = run.node_endpoints.find(peer);
    // A stage merged onto the same node, or a node reached already, needs no connection.
    if (peer == node || published == run.node_endpoints.end() || !run.wired.insert(pair).second)
      continue;
    wiring.endpoints.push_back(published->second);
  }
  if (!wiring.endpoints.empty())
    self->send(st.members.at(node).agent, std::move(wiring));
}

void report_split(job_master_state& st) {
  const auto& run = *st.pipeline;
  auto& summary = st.report.pipeline;
  summary.stage_layers.clear();
  summary.stage_nodes.clear();
  summary.stage_seconds_predicted.clear();
  for (std::size_t t = 0; t < run.stages(); ++t) {
    const auto& stage = run.placement.stages[t];
    summary.stage_layers.push_back({stage.first_layer, stage.end_layer});
    summary.stage_nodes.push_back(run.stage_nodes[t]);
    summary.stage_seconds_predicted.push_back(stage.predicted_seconds);
  }
}

void wire_stage(self_ptr self, std::uint32_t s, const std::vector<std::uint32_t>& neighbours) {
  const auto& run = *self->state.pipeline;
  std::vector<std::uint64_t> peers;
  for (auto t : neighbours)
    peers.push_back(run.stage_nodes[t]);
  connect_node(self, run.stage_nodes[s], peers);
}

void begin_epoch_figures(pipeline_run& run) {
  run.trained = false;
  run.copies_trained = 0;
  run.epoch_busy.assign(run.subnets.size(), 0.0);
  run.epoch_steps.assign(run.placement.pipelines, 0);
  run.epoch_restored = false;
  run.reported.assign(run.placement.pipelines, std::nullopt);
}

void run_pipeline_epoch(self_ptr self) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  for (std::size_t first = 0; first < run.subnets.size(); first += run.stages())
    self->send(run.subnets[first], stage_run{st.status.epoch, false, run.generation, 0});
}

namespace {

/// Records `note` in `run` when `sender` is its stage's holder there; false when not.
bool record_held(pipeline_run& run, const caf::actor_addr& sender,
                 const stage_snapshot_note& note) {
  if (note.stage >= run.held.size() ||
      sender != run.subnets[holder_of(note.stage, run.stages())].address())
    return false;
  auto& held = run.held[note.stage];
  if (held.size() == stage_snapshots::held_kept)
    held.erase(held.begin());
  held.push_back(note);
  auto& taken = run.taken[note.stage];
  if (taken.size() == stage_snapshots::own_kept)
    taken.erase(taken.begin());
  taken.push_back(note);
  return true;
}

} // namespace

void pipeline_snapshot_held(self_ptr self, const stage_snapshot_note& note) {
  auto& st = self->state;
  if (st.outcome || !st.pipeline)
    return;
  auto& run = *st.pipeline;
  const auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
  // The old split's copies of the epoch's end may still come in while the new split starts:
  // a loss before the new one's copies are held goes back to them.
  if (record_held(run, sender, note))
    start_new_split_once_held(self);
  else if (run.replaced)
    record_held(*run.replaced, sender, note);
}

void pipeline_epoch_ended(self_ptr self, const job_master_setup& setup,
                          const stage_epoch_end& ended) {
  auto& st = self->state;
  if (st.outcome || !st.pipeline || ended.epoch != st.status.epoch
      || ended.generation != st.pipeline->generation)
    return;
  auto& run = *st.pipeline;
  const auto copy = copy_ending_at(run, self->current_sender());
  if (!copy || (ended.evaluation && *copy != 0))
    return;
  st.last_heard = self->clock().now();
  auto& summary = st.report.pipeline;
  for (auto bytes : ended.activation_bytes)
    summary.activation_bytes += bytes;
  if (ended.evaluation) {
    test_result tested;
    if (ended.samples > 0)
      tested = {static_cast<double>(ended.correct) / static_cast<double>(ended.samples),
                ended.loss_sum / static_cast<double>(ended.samples)};
    return checkpoint_then_end(self, setup, tested);
  }
  // Every copy's share adds up to the epoch's figures.
  st.epoch_done.loss_sum += ended.loss_sum;
  st.epoch_done.batches += ended.steps;
  st.epoch_done.samples += ended.samples;
  st.report.iterations += ended.steps;
  const auto stages = std::min(ended.busy_seconds.size(), run.busy_seconds.size());
  for (std::size_t s = 0; s < stages; ++s) {
    run.busy_seconds[s] += ended.busy_seconds[s];
    run.epoch_busy[*copy * run.stages() + s] = ended.busy_seconds[s];
  }
  run.epoch_steps[*copy] = ended.steps;
  run.split_steps += ended.steps;
  run.reported[*copy] = ended;
  if (++run.copies_trained < run.placement.pipelines)
    return;
  st.round_started = self->clock().now();  // the epoch's training ends here
  run.trained = true;
  run.train_seconds += seconds_between(st.epoch_started, st.round_started);
  // Per minibatch, over the epochs and copies on this split; the bubble is the stages' mean
  // idle share of the time every copy trained.
  const double steps = static_cast<double>(std::max<std::uint64_t>(run.split_steps, 1));
  summary.stage_seconds.clear();
  for (double busy : run.busy_seconds)
    summary.stage_seconds.push_back(busy / steps);
  const double busy_mean =
    std::accumulate(run.busy_seconds.begin(), run.busy_seconds.end(), 0.0)
    / static_cast<double>(std::max<std::size_t>(run.busy_seconds.size(), 1) *
                          run.placement.pipelines);
  summary.bubble_fraction =
    run.train_seconds > 0 ? std::clamp(1.0 - busy_mean / run.train_seconds, 0.0, 1.0) : 0.0;
  self->send(run.subnets.front(), stage_run{st.status.epoch, true, run.generation, 0});
}

} // namespace strom::actors::job_steps
