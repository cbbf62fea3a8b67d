#include "strom/runtime/node/pipeline_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <span>
#include <utility>

#include "strom/compute/encoders/threshold_encoder_from_spec.hpp"
#include "strom/compute/memory_estimate.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/partition/layer_profile.hpp"
#include "strom/compute/layers/dense.hpp"
#include "strom/compute/partition/stage_partition.hpp"
#include "strom/compute/pipeline/column_blocks.hpp"
#include "strom/compute/pipeline/stage_regroup.hpp"
#include "strom/compute/pipeline/stage_replica.hpp"
#include "strom/compute/random.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/compute/snapshots/replica_snapshot.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "strom/runtime/job/checkpoint_runs.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/node/training_setup.hpp"

namespace strom::runtime {

namespace {

/// GPipe's advice: at least four micro-batches a stage keep the bubble below a fifth.
constexpr std::uint32_t micro_batches_per_stage = 4;

/// Room in a snapshot bound for its framing: list headers, progress, the message's words.
constexpr std::uint64_t snapshot_slack_bytes = std::uint64_t{1} << 20;

/// The job as the nodes read it (overrides applied, data paths absolute).
result<job_spec> parsed_job(const std::string& text, const std::string& source) {
  auto parsed = parse_job_text(text, source, "/");
  if (!parsed)
    return parsed.err();
  if (auto ok = prepare_run(*parsed, {}); !ok)
    return ok.err();
  return parsed;
}

/// One batch of seeded values in [0, 1) of the network's input shape: what the profiler
/// times the layers on (dense and activation layers take as long whatever the values).
compute::dataset synthetic_batch(const compute::network_layers& net, std::size_t batch) {
  compute::dataset samples;
  samples.sample_shape = net.input;
  samples.classes = net.classes;
  samples.features.resize(batch * net.input.size());
  compute::rng gen{0};
  for (auto& value : samples.features)
    value = gen.uniform(0.0f, 1.0f);
  for (std::size_t i = 0; i < batch; ++i)
    samples.labels.push_back(static_cast<std::int32_t>(i % std::max<std::size_t>(net.classes, 1)));
  return samples;
}

/// Every node with a budget holds one replica of the job per worker (data parallelism).
result<void> check_replicas_fit(const job_spec& job,
                                const std::vector<actors::node_status>& nodes) {
  std::uint32_t workers = 0;
  for (const auto& node : nodes)
    workers += node.workers;
  for (const auto& node : nodes) {
    if (node.memory_limit == 0)
      continue;
    auto needed = compute::estimate_memory(job.reader(), {node.workers, workers > 1});
    if (!needed)
      return error{fmt::format("{}: {}", job.source(), needed.err().message)};
    if (needed->total() > node.memory_limit)
      return error{fmt::format("{}: the model needs {} but {} offers {} (--memory-limit); "
                               "--mode pipeline splits it across nodes",
                               job.source(), compute::to_string(*needed),
                               actors::describe(node), compute::bytes_text(node.memory_limit))};
  }
  return success();
}

/// Measured rates within this share of the fastest count as equal to it: the probe's spread on
/// a shared machine, which would otherwise move layers between equal nodes from run to run.
constexpr double equal_speed_share = 0.9;

/// Each node's speed relative to the fastest: measured (compute_rate, which includes the
/// announced factor) when every node measured one, else the announced factor.
std::vector<double> relative_speeds(const std::vector<actors::node_status>& nodes) {
  std::vector<double> speeds;
  const bool measured = std::all_of(nodes.begin(), nodes.end(), [](const auto& node) {
    return node.compute_rate > 0.0;
  });
  double fastest = 0.0;
  for (const auto& node : nodes)
    fastest = std::max(fastest, node.compute_rate);
  for (const auto& node : nodes) {
    const double share = node.compute_rate / fastest;
    speeds.push_back(!measured ? node.speed_factor : share >= equal_speed_share ? 1.0 : share);
  }
  return speeds;
}

/// A split that places dense layers too large for any node as blocks of output columns.
struct column_placement {
  std::vector<compute::column_plan> plans;
  compute::stage_partition split;
};

/// LightDNN's answer to a layer larger than a node: every dense layer whose resident bytes
/// exceed the largest budget offered is split into blocks of (nearly) equal columns, each
/// within that budget, in as few blocks as the stages then fit (2 up to one a stage). nullopt
/// when no layer is that large; an error when no number of blocks fits.
result<std::optional<column_placement>> place_in_columns(const compute::network_layers& net,
                                                 const compute::layer_costs& costs,
                                                 std::span<const compute::stage_node> offered,
                                                 const compute::stage_partition_options& options) {
  std::uint64_t largest = 0;
  for (const auto& node : offered)
    largest = std::max(largest, node.memory_budget);
  std::vector<std::pair<std::uint32_t, const compute::dense*>> large;
  for (std::size_t i = 0; i < net.layers.size(); ++i)
    if (const auto* d = dynamic_cast<const compute::dense*>(net.layers[i].get());
        d && costs.layers[i].resident_bytes() > largest)
      large.emplace_back(static_cast<std::uint32_t>(i), d);
  if (large.empty())
    return std::optional<column_placement>{};
  const std::uint64_t rows = std::uint64_t{options.micro_batch_size} * options.micro_batches_in_flight;
  for (std::size_t blocks = 2; blocks <= offered.size(); ++blocks) {
    column_placement placed;
    std::vector<std::size_t> inputs;
    for (const auto& [index, d] : large) {
      const auto parameters = std::max<std::uint64_t>(d->parameter_count(), 1);
      // What a parameter costs where it lies, and the activations every block keeps.
      const compute::dense_layer_size size{
        d->inputs(), d->units(), (costs.layers[index].resident_bytes() + parameters - 1) / parameters,
        rows * (d->inputs() + d->units()) * sizeof(float)};
      auto plan = compute::plan_columns(index, size, blocks, largest);
      if (!plan)
        break;
      placed.plans.push_back(std::move(*plan));
      inputs.push_back(d->inputs());
    }
    if (placed.plans.size() != large.size())
      continue;
    auto split = compute::partition_stages(compute::split_costs(costs, placed.plans, inputs),
                                           offered, options);
    if (split) {
      placed.split = std::move(*split);
      return std::optional{std::move(placed)};
    }
  }
  return error{fmt::format("layer {} ({}) is larger than every node, and in blocks of output "
                           "columns on 2 to {} nodes it and the other layers do not fit either",
                           large.front().first, large.front().second->kind(), offered.size())};
}

/// A pipeline job's stages on its first stages x pipelines nodes: copy r of stage s on node
/// r * stages + s. One split serves every copy (their stages share parameters), chosen for
/// each stage position's slowest node (relative_speeds) and smallest budget among its copies.
result<actors::job_placement> place_stages(const job_spec& job,
                                           const std::vector<actors::node_status>& nodes) {
  const auto spec = job.reader();
  const auto distributed = spec.getDistributed();
  const std::uint32_t batch = spec.getTraining().getBatchSize();
  const auto joined = static_cast<std::uint32_t>(nodes.size());
  const std::uint32_t spares = distributed.getSpares();
  const std::uint32_t available = joined - std::min(spares, joined);
  const std::uint32_t copies = std::max(distributed.getPipelines(), 1u);
  const std::uint32_t stages =
    distributed.getStages() > 0 ? distributed.getStages() : available / copies;
  if (stages < 2 || stages * copies > available)
    return error{fmt::format("{}: a pipeline of {} stages in {} copies needs {} worker nodes, one "
                             "a stage, and at least 2 stages, besides {} spares; the job has {}",
                             job.source(), stages, copies, std::max(stages, 2u) * copies, spares,
                             joined)};
  auto layers = compute::make_layers(spec.getNetwork(), 0);
  if (!layers)
    return error{fmt::format("{}: {}", job.source(), layers.err().message)};
  if (stages > layers->layers.size())
    return error{fmt::format("{}: {} stages for a network of {} layers", job.source(), stages,
                             layers->layers.size())};
  const std::uint32_t micro = std::min(
    batch, distributed.getMicroBatches() > 0 ? distributed.getMicroBatches()
                                             : micro_batches_per_stage * stages);
  const auto slots = compute::slots_for(batch, micro, stages, distributed.getSchedule());
  const auto micro_size = static_cast<std::uint32_t>(slots.slot_rows);
  const auto samples = synthetic_batch(*layers, batch);
  const auto start = std::chrono::steady_clock::now();
  compute::layer_profile_options profiling;
  profiling.seconds_now = [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // A stage computes micro-batches: time the layers at that size, on as many samples as
  // whole batches would be (small batches time less steadily).
  profiling.batch_size = micro_size;
  profiling.batches = compute::default_profiled_batches * micro;
  auto costs = compute::profile_layers(spec, samples, profiling);
  if (!costs)
    return error{fmt::format("{}: {}", job.source(), costs.err().message)};
  const bool by_speed = distributed.getPartition() == schema::StagePartition::SPEED_AWARE;
  const auto speeds = relative_speeds({nodes.begin(), nodes.begin() + stages * copies});
  std::vector<compute::stage_node> offered;
  for (std::uint32_t s = 0; s < stages; ++s) {
    compute::stage_node position{nodes[s].name, 1.0, std::numeric_limits<std::uint64_t>::max()};
    for (std::uint32_t r = 0; r < copies; ++r) {
      const auto& node = nodes[r * stages + s];
      const double speed = speeds[r * stages + s];
      if (r > 0)
        position.name += "+" + node.name;
      if (by_speed)
        position.speed = r == 0 ? speed : std::min(position.speed, speed);
      if (node.memory_limit > 0)
        position.memory_budget = std::min(position.memory_budget, node.memory_limit);
    }
    offered.push_back(std::move(position));
  }
  compute::stage_partition_options options;
  options.micro_batch_size = micro_size;
  options.micro_batches_in_flight = slots.slots;  // what the schedule keeps on a stage
  options.try_node_orders = true;
  auto split = compute::partition_stages(*costs, offered, options);
  std::vector<compute::column_plan> column_plans;
  if (!split) {
    auto in_columns = place_in_columns(*layers, *costs, offered, options);
    if (!in_columns || !*in_columns)
      return error{fmt::format("{}: {}{}", job.source(), split.err().message,
                               in_columns ? "" : "; " + in_columns.err().message)};
    column_plans = std::move((*in_columns)->plans);
    split = std::move((*in_columns)->split);
  }
  actors::job_placement placement;
  placement.job_name = spec.getName();
  placement.epochs = spec.getTraining().getEpochs();
  placement.micro_batches = micro;
  placement.batch_size = batch;
  placement.pipelines = copies;
  placement.column_plans = std::move(column_plans);
  // A speed-blind split ignores speeds, so their drift does not move it either.
  placement.repartition_margin = by_speed ? distributed.getRepartitionMargin() : 0.0;
  for (std::uint32_t r = 0; r < copies; ++r)
    for (const auto& stage : split->stages)
      placement.stages.push_back({static_cast<std::uint32_t>(stage.first_layer),
                                  static_cast<std::uint32_t>(stage.end_layer),
                                  static_cast<std::uint32_t>(r * stages + stage.node),
                                  stage.predicted_seconds() * micro, stage.memory_bytes});
  return placement;
}

} // namespace

result<actors::job_placement> place_job(const actors::job_submission& submission,
                                        const std::vector<actors::node_status>& nodes) {
  auto job = parsed_job(submission.job_text, submission.source);
  if (!job)
    return job.err();
  if (job->reader().getDistributed().getMode() == schema::TrainingMode::PIPELINE)
    return place_stages(*job, nodes);
  if (auto ok = check_replicas_fit(*job, nodes); !ok)
    return ok.err();
  return actors::job_placement{};
}

namespace {

/// A pipeline's checkpoint (issue #39): the whole network's state, put together from every
/// stage's by the first stage, in a replica of `job` saved as any mode's checkpoint is, so
/// that any mode can resume or evaluate it.
result<std::string> save_pipeline_checkpoint(const job_spec& job,
                                             const compute::replica_snapshot& network,
                                             const actors::stage_checkpoint& request,
                                             std::uint64_t train_samples) {
  auto model = compute::make_replica(job.reader(), 0);
  if (!model)
    return error{fmt::format("{}: {}", job.source(), model.err().message)};
  if (auto taken = compute::apply_snapshot(network, **model, nullptr); !taken)
    return error{fmt::format("{}: the pipeline's state does not fit its network: {}",
                             job.source(), taken.err().message)};
  const checkpoint_plan plan{request.folder, request.keep, request.nodes, request.nodes};
  const checkpoint_progress progress{request.epochs,
                                     network.progress.iteration,
                                     train_samples * request.epochs,
                                     static_cast<float>(request.test_accuracy),
                                     static_cast<float>(request.test_loss),
                                     plan.workers,
                                     plan.nodes};
  return save_run_checkpoint(plan, job, **model, progress);
}

/// A stage of a job that goes on from a checkpoint takes its layers' share of the whole
/// network's state (issue #39).
result<void> resume_stage(const actors::stage_assignment& work,
                          std::span<const compute::layer_size> network_layers,
                          compute::replica& stage) {
  // The checkpoint holds the network's layers, not the blocks a split dense layer becomes.
  if (!work.column_plans.empty())
    return error{"a pipeline that splits dense layers by columns cannot resume from a "
                 "checkpoint yet"};
  auto network = compute::decode_snapshot(work.resume.snapshot.words());
  if (!network)
    return error{fmt::format("the checkpoint to resume from: {}", network.err().message)};
  const compute::layer_range all{0, static_cast<std::uint32_t>(network_layers.size())};
  const compute::stage_source whole{all, &*network};
  auto share = compute::regroup_stage(network_layers, {work.first_layer, work.end_layer},
                                      {&whole, 1});
  if (!share)
    return error{fmt::format("the checkpoint to resume from: {}", share.err().message)};
  return compute::apply_snapshot(*share, stage, nullptr);
}

} // namespace

result<actors::subnet_setup> prepare_stage(const actors::stage_assignment& work) {
  auto job = parsed_job(work.job_text, work.source);
  if (!job)
    return job.err();
  const auto spec = job->reader();
  if (work.stages < 2 || work.stage >= work.stages || work.micro_batches == 0
      || work.pipelines == 0 || work.pipeline >= work.pipelines)
    return error{fmt::format("{}: stage {} of {} with {} micro-batches in copy {} of {}",
                             job->source(), work.stage + 1, work.stages, work.micro_batches,
                             work.pipeline + 1, work.pipelines)};
  const auto schedule = spec.getDistributed().getSchedule();
  const auto slots = compute::slots_for(spec.getTraining().getBatchSize(), work.micro_batches,
                                        work.stages, schedule);
  auto stage = compute::make_stage_replica(spec, {work.first_layer, work.end_layer},
                                           work.pipeline, slots.rows(), work.column_plans);
  if (!stage)
    return error{fmt::format("{}: {}", job->source(), stage.err().message)};
  auto layers = compute::make_layers(spec.getNetwork(), 0);
  if (!layers)
    return error{fmt::format("{}: {}", job->source(), layers.err().message)};
  if (auto split = compute::split_columns(*layers, work.column_plans); !split)
    return error{fmt::format("{}: {}", job->source(), split.err().message)};
  actors::subnet_setup setup;
  setup.network_layers = compute::layer_sizes_of(*layers);
  if (work.resume.epochs_done > 0)
    if (auto resumed = resume_stage(work, setup.network_layers, (*stage)->core()); !resumed)
      return error{fmt::format("{}: {}", job->source(), resumed.err().message)};
  setup.job_id = work.job_id;
  setup.stage = work.stage;
  setup.stages = work.stages;
  setup.micro_batches = work.micro_batches;
  setup.schedule = schedule;
  setup.generation = work.generation;
  setup.fetch_token = work.fetch_token;
  setup.pipeline = work.pipeline;
  setup.pipelines = work.pipelines;
  setup.snapshot_every = std::max<std::uint32_t>(spec.getDistributed().getSnapshotEvery(), 1);
  if (work.pipelines > 1) {
    auto sharing = compute::make_threshold_encoder_options(spec.getDistributed().getSharing());
    if (!sharing)
      return error{fmt::format("{}: {}", job->source(), sharing.err().message)};
    setup.sharing = std::move(sharing).value();
  }
  // A stage holds a neighbour's copies: no stage's snapshot outgrows the whole network's state.
  auto whole = compute::estimate_memory(spec, {1, false});
  if (!whole)
    return error{fmt::format("{}: {}", job->source(), whole.err().message)};
  setup.snapshot_bytes = static_cast<std::size_t>(
    2 * (whole->parameters + whole->updater_state + whole->model_state) + snapshot_slack_bytes);
  setup.seed = spec.getTraining().getSeed();
  setup.shuffle = spec.getData().getShuffle();
  if (work.stage == 0) {
    const auto layers = spec.getNetwork().getLayers();
    const std::size_t classes = layers[layers.size() - 1].getOutput().getUnits();
    auto data = load_training_data(*job, (*stage)->input_width(), classes);
    if (!data)
      return data.err();
    setup.train = std::make_shared<const compute::dataset>(std::move(data->train));
    if (data->test.size() > 0)
      setup.test = std::make_shared<const compute::dataset>(std::move(data->test));
    if (work.pipeline == 0)  // the first copy's first stage saves the pipeline's checkpoints
      setup.save_checkpoint = [saved = std::make_shared<const job_spec>(*job),
                               samples = setup.train->size()](
                                const compute::replica_snapshot& network,
                                const actors::stage_checkpoint& request) {
        return save_pipeline_checkpoint(*saved, network, request, samples);
      };
  }
  setup.replica = std::shared_ptr<compute::stage_replica>(std::move(*stage));
  return setup;
}

} // namespace strom::runtime
