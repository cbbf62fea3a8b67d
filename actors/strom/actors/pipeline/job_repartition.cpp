// The job_master's part in splitting a pipeline's layers again (issue #20, LightDNN's dynamic
// partition). The placer split the layers by the speeds the nodes measured when they joined;
// every epoch the stages then report how long they were busy. At the next epoch's start, when
// the stages' measured times over their predictions differ by more than the job's margin
// (distributed.repartitionMargin) in two measured epochs in a row (one epoch's noise, a
// neighbour's burst, moves nothing) and in the two together, a node's speed drifted against
// the others: each node's speed is corrected by its stage's ratio over both epochs (against
// the least drifted) and the placer places the layers again. An unchanged split only takes
// the corrected predictions. A new split runs in a new generation, on the same nodes:
//   1. every slot's node spawns its new subnet (stage_assignment);
//   2. each new subnet fetches the state of the old subnets that held its layers
//      (stage_refill, stage_state_fetch) and puts its own together (compute::regroup_stage);
//   3. the new ones are linked, and each sends its holder a copy of the state it took;
//   4. once every copy is held, the old subnets end (stage_retire to their nodes) and the
//      epoch starts. Nothing is trained twice: the old stages were idle at the epoch's end.
// Only a pipeline in one copy is re-partitioned (copies would also need their residuals
// moved). A node lost before step 4 abandons the new split: its subnets end and the old one,
// which still holds the state and its holders' copies of it, is restored as any other
// (abandon_repartition); lost after it, the new split is restored. The pipeline so never gives
// up a point every stage can go back to before it holds a newer one.

#include "strom/actors/pipeline/job_pipeline.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/job/job_master_steps.hpp"
#include "strom/log.hpp"

namespace strom::actors::job_steps {

namespace {

/// The nodes to place the job on again: the stages' nodes by slot, then the job's other
/// members (its spares), each with the speed its stages were placed with, the stages' scaled
/// by `scale` (by slot).
std::vector<node_status> nodes_to_place(const job_master_state& st,
                                        const std::vector<double>& scale) {
  const auto& run = *st.pipeline;
  const auto status_of = [&](std::uint64_t id) {
    const auto found = run.assumed.find(id);
    return found != run.assumed.end() ? found->second : st.members.at(id).status;
  };
  std::vector<node_status> nodes;
  for (std::size_t t = 0; t < run.stage_nodes.size(); ++t) {
    auto node = status_of(run.stage_nodes[t]);
    node.compute_rate *= scale[t];
    node.speed_factor *= scale[t];
    nodes.push_back(std::move(node));
  }
  for (const auto& [id, member] : st.members)
    if (std::find(run.stage_nodes.begin(), run.stage_nodes.end(), id) == run.stage_nodes.end())
      nodes.push_back(status_of(id));
  return nodes;
}

/// The split's layer ranges and their nodes, for logs: "[0, 2) on 3, [2, 5) on 4".
std::string split_text(const job_placement& placement,
                       const std::vector<std::uint64_t>& nodes) {
  std::string text;
  for (std::size_t t = 0; t < placement.stages.size(); ++t)
    text += fmt::format("{}[{}, {}) on node {}", t ? ", " : "", placement.stages[t].first_layer,
                        placement.stages[t].end_layer, nodes[t]);
  return text;
}

/// Ends `subnets` (by slot, on `nodes`) that run on nodes still in the job; their nodes do not
/// take that for a failure.
void retire(self_ptr self, const std::vector<caf::actor>& subnets,
            const std::vector<std::uint64_t>& nodes) {
  auto& st = self->state;
  std::map<std::uint64_t, std::vector<caf::actor>> by_node;
  for (std::size_t u = 0; u < subnets.size(); ++u)
    if (subnets[u])
      by_node[nodes[u]].push_back(subnets[u]);
  for (auto& [node, retired] : by_node)
    if (auto member = st.members.find(node); member != st.members.end())
      self->send(member->second.agent, stage_retire{st.status.job_id, std::move(retired)});
}

/// Step 3: the new subnets are linked; they send their holders their copies (stage_links).
void link_new_split(self_ptr self, const job_master_setup& setup) {
  link_stages(self, setup, [self, generation = self->state.pipeline->generation] {
    if (!pipeline_in_generation(self, generation))
      return;  // abandoned meanwhile
    self->state.pipeline->split_linked = true;
    start_new_split_once_held(self);
  });
}

/// Step 2: each new subnet takes its layers' state from the old subnets that held them.
void refill_stages(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  const auto old = run.replaced;
  const auto generation = run.generation;
  const stage_point at{st.status.epoch, 0};
  auto left = std::make_shared<std::size_t>(run.subnets.size());
  for (std::uint32_t t = 0; t < run.subnets.size(); ++t) {
    const auto& stage = run.placement.stages[t];
    stage_refill refill;
    refill.generation = old->generation;
    refill.to.stage = t;
    refill.to.at = at;
    std::vector<std::uint64_t> peers;  // the old subnets' nodes and the upstream neighbour's
    if (t > 0)
      peers.push_back(run.stage_nodes[t - 1]);
    for (std::size_t u = 0; u < old->placement.stages.size(); ++u) {
      const auto& was = old->placement.stages[u];
      if (was.end_layer <= stage.first_layer || was.first_layer >= stage.end_layer)
        continue;
      refill.sources.push_back(old->subnets[u]);
      refill.first_layers.push_back(was.first_layer);
      refill.end_layers.push_back(was.end_layer);
      peers.push_back(old->stage_nodes[u]);
    }
    connect_node(self, run.stage_nodes[t], peers);
    // The old split's state was taken at the epoch's end: the taken snapshot is that point.
    run.taken[t] = {refill.to};
    const auto current = [self, generation] { return pipeline_in_generation(self, generation); };
    self->request(run.subnets[t], setup.timeouts.prepare_timeout, std::move(refill))
      .then(
        [self, setup, left, current](std::uint64_t) {
          if (current() && --*left == 0)
            link_new_split(self, setup);
        },
        [self, setup, t, current](caf::error& err) {
          if (!current())
            return;
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::node_failed),
                              fmt::format("pipeline stage {} of the new split did not take its "
                                          "layers' state: {}", t + 1,
                                          error_text(self->system(), err))));
        });
  }
}

/// Step 1: the new split's subnets are spawned on their nodes; the old ones stay until the
/// new ones hold their layers' state.
void respawn(self_ptr self, const job_master_setup& setup, job_placement placed,
             std::vector<std::uint64_t> nodes) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  run.replaced = std::make_shared<pipeline_run>(run);
  run.split_linked = false;
  log::info("job_master: job {} splits its pipeline again before epoch {}: {} (was {})",
            st.status.job_id, st.status.epoch + 1, split_text(placed, nodes),
            split_text(run.placement, run.stage_nodes));
  ++run.generation;
  run.placement = std::move(placed);
  run.stage_nodes = std::move(nodes);
  const auto slots = run.placement.stages.size();
  run.subnets.assign(slots, caf::actor{});
  run.held.assign(slots, {});
  run.taken.assign(slots, {});
  run.ready = 0;
  run.busy_seconds.assign(run.stages(), 0.0);
  run.split_steps = 0;
  run.train_seconds = 0.0;
  report_split(st);
  for (std::uint32_t t = 0; t < slots; ++t)
    assign_stage(self, setup, t, st.members.at(run.stage_nodes[t]), false, [self, setup] {
      auto& run = *self->state.pipeline;
      if (++run.ready == run.subnets.size())
        refill_stages(self, setup);
    });
}

/// The speed corrections the last two measured epochs agree on: nullopt until a second epoch
/// in a row shows the drift the first one did. An epoch in which a stage was restored measured
/// only part of it (perhaps on another split): the judgement starts afresh.
std::optional<std::vector<double>> confirmed_corrections(self_ptr self) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  const auto steps = run.epoch_steps.empty() ? 0 : run.epoch_steps.front();
  if (run.epoch_restored || !speed_corrections(run.placement, run.epoch_busy, steps)) {
    run.drift_busy.clear();
    return std::nullopt;
  }
  if (run.drift_busy.empty()) {
    log::info("job_master: job {}: its stages' speeds drifted in epoch {}; the next epoch "
              "confirms it before the layers move", st.status.job_id, st.status.epoch);
    run.drift_busy = run.epoch_busy;
    run.drift_steps = steps;
    return std::nullopt;
  }
  std::vector<double> busy = run.epoch_busy;
  for (std::size_t t = 0; t < busy.size(); ++t)
    busy[t] += run.drift_busy[t];
  run.drift_busy.clear();
  return speed_corrections(run.placement, busy, steps + run.drift_steps);
}

} // namespace

void start_pipeline_epoch(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  const auto scale = setup.place ? confirmed_corrections(self) : std::nullopt;
  begin_epoch_figures(run);
  if (!scale)
    return run_pipeline_epoch(self);
  auto nodes = nodes_to_place(st, *scale);
  auto placed = setup.place(setup.submission, nodes);
  if (!placed || placed->stages.size() != run.placement.stages.size()
      || placed->column_plans != run.placement.column_plans) {
    log::warning("job_master: job {}: its stages' speeds drifted, and placing them again "
                 "failed: {}; the split stays", st.status.job_id,
                 placed ? "another number of stages or column blocks" : placed.err().message);
    return run_pipeline_epoch(self);
  }
  // From here the corrected speeds are what the split was placed with.
  for (const auto& node : nodes)
    run.assumed[node.node_id] = node;
  std::vector<std::uint64_t> placed_nodes;
  for (auto& stage : placed->stages) {
    placed_nodes.push_back(nodes[stage.node].node_id);
    // As at the start, an index into the job's nodes (every member was one of them).
    stage.node = static_cast<std::uint32_t>(
      std::find_if(setup.nodes.begin(), setup.nodes.end(),
                   [&](const job_node& n) { return n.status.node_id == placed_nodes.back(); })
      - setup.nodes.begin());
  }
  const bool same = placed_nodes == run.stage_nodes
                    && std::equal(placed->stages.begin(), placed->stages.end(),
                                  run.placement.stages.begin(), [](const auto& a, const auto& b) {
                                    return a.first_layer == b.first_layer
                                           && a.end_layer == b.end_layer;
                                  });
  if (same) {
    log::info("job_master: job {}: its stages' speeds drifted; the best split is still {}",
              st.status.job_id, split_text(run.placement, run.stage_nodes));
    run.placement.stages = std::move(placed->stages);
    report_split(st);
    return run_pipeline_epoch(self);
  }
  respawn(self, setup, std::move(*placed), std::move(placed_nodes));
}

void start_new_split_once_held(self_ptr self) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  const stage_point split_at{st.status.epoch, 0};
  const auto held_at_split = [&](const std::vector<stage_snapshot_note>& copies) {
    return std::any_of(copies.begin(), copies.end(),
                       [&](const stage_snapshot_note& note) { return note.at == split_at; });
  };
  if (!run.replaced || !run.split_linked ||
      !std::all_of(run.held.begin(), run.held.end(), held_at_split))
    return;
  retire(self, run.replaced->subnets, run.replaced->stage_nodes);
  run.replaced.reset();  // from here a loss is restored in the new split
  ++st.report.pipeline.repartitions;
  log::info("job_master: job {} trains epoch {} on its new split (generation {})",
            st.status.job_id, st.status.epoch + 1, run.generation);
  run_pipeline_epoch(self);
}

void abandon_repartition(self_ptr self) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  retire(self, run.subnets, run.stage_nodes);
  log::warning("job_master: job {} lost a node while splitting its pipeline again; it keeps "
               "its split: {}", st.status.job_id,
               split_text(run.replaced->placement, run.replaced->stage_nodes));
  const auto generation = run.generation;
  auto endpoints = std::move(run.node_endpoints);
  auto wired = std::move(run.wired);
  const auto old = std::move(run.replaced);
  run = *old;
  // Newer than any answer of the abandoned split, which then no longer counts.
  run.generation = generation;
  run.node_endpoints = std::move(endpoints);
  run.wired = std::move(wired);
  report_split(st);
}

} // namespace strom::actors::job_steps
