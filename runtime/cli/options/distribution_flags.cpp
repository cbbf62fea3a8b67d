#include "distribution_flags.hpp"

#include <fmt/format.h>

#include <limits>
#include <string>

namespace strom::cli {

command_spec with_distribution_options(command_spec spec) {
  spec.options.push_back(
    {"device", "D",
     "override training.device: cpu, or cuda (every worker's step on the GPU; several workers "
     "share it, each on its own stream)"});
  spec.options.push_back(
    {"topology", "KIND",
     "override distributed.topology: plain (through one hub), mesh (a tree of relays) or "
     "auto (mesh from 32 nodes)"});
  spec.options.push_back(
    {"fanout", "F", "override distributed.fanout: children a mesh node has at most (1..1024)"});
  spec.options.push_back(
    {"mode", "MODE",
     "override distributed.mode: shared (threshold-encoded updates every step), averaging "
     "(parameters averaged every --averaging-frequency steps), kvstore (parameter servers) or "
     "pipeline (the network split into stages across the worker nodes)"});
  spec.options.push_back({"averaging-frequency", "K",
                          "override distributed.averagingFrequency: steps between averages"});
  spec.options.push_back({"kvstore", "TYPE",
                          "override distributed.kvstore: dist_sync (a step merges every "
                          "worker's push) or dist_async (every push is applied at once)"});
  spec.options.push_back({"compression", "C",
                          "override distributed.compression: how kvstore workers push "
                          "gradients: none (fp32), 2bit or threshold"});
  spec.options.push_back({"replicas", "R",
                          "override distributed.replicas: servers that hold each key range"});
  spec.options.push_back({"pull-precision", "P",
                          "override distributed.pullPrecision: what kvstore shards answer "
                          "pushes with: fp32 or fp16"});
  spec.options.push_back({"stages", "K",
                          "override distributed.stages: pipeline stages (default: one a worker "
                          "node)"});
  spec.options.push_back({"micro-batches", "M",
                          "override distributed.microBatches: micro-batches a pipeline splits "
                          "each minibatch into (default: 4 x stages)"});
  spec.options.push_back({"pipelines", "R",
                          "override distributed.pipelines: copies of the pipeline, each on "
                          "nodes of its own, sharing their stages' updates (default 1)"});
  spec.options.push_back({"snapshot-every", "STEPS",
                          "override distributed.snapshotEvery: minibatches between a pipeline's "
                          "stage snapshots, which a lost stage is restored from (default 100)"});
  spec.options.push_back({"schedule", "S",
                          "override distributed.schedule: how a pipeline lets micro-batches "
                          "go: 1f1b (default; two a stage in flight) or gpipe (all at once)"});
  spec.options.push_back({"spares", "N",
                          "override distributed.spares: worker nodes a pipeline job keeps idle "
                          "to restore a lost stage on (default 0)"});
  spec.options.push_back({"repartition-margin", "SHARE",
                          "override distributed.repartitionMargin: split a pipeline again at an "
                          "epoch's end once its stages' measured times over their predictions "
                          "differ by more than this share (default 0.25; 0: never)"});
  return spec;
}

result<void> read_distribution_flags(const arguments& args,
                                     runtime::local_training_options& overrides) {
  if (auto text = args.get("device")) {
    auto device = runtime::parse_device(*text);
    if (!device)
      return error{"--device: " + device.err().message};
    overrides.device = *device;
  }
  if (auto text = args.get("topology")) {
    auto kind = actors::parse_topology_kind(*text);
    if (!kind)
      return error{"--topology: " + kind.err().message};
    overrides.topology = *kind;
  }
  auto fanout = args.get_uint("fanout", 1, actors::max_fanout);
  if (!fanout)
    return fanout.err();
  if (auto f = fanout.value())
    overrides.fanout = static_cast<std::uint32_t>(*f);
  if (auto text = args.get("mode")) {
    auto mode = runtime::parse_training_mode(*text);
    if (!mode)
      return error{"--mode: " + mode.err().message};
    overrides.mode = *mode;
  }
  auto frequency = args.get_uint("averaging-frequency", 1, runtime::max_averaging_frequency);
  if (!frequency)
    return frequency.err();
  if (auto k = frequency.value())
    overrides.averaging_frequency = static_cast<std::uint32_t>(*k);
  if (auto text = args.get("kvstore")) {
    if (*text != "dist_sync" && *text != "dist_async")
      return error{fmt::format("--kvstore: '{}' is not dist_sync or dist_async", *text)};
    overrides.kvstore =
      *text == "dist_async" ? schema::KvStoreSync::DIST_ASYNC : schema::KvStoreSync::DIST_SYNC;
  }
  if (auto text = args.get("pull-precision")) {
    if (*text == "fp32")
      overrides.pull_precision = schema::PullPrecision::FP32;
    else if (*text == "fp16")
      overrides.pull_precision = schema::PullPrecision::FP16;
    else
      return error{fmt::format("--pull-precision: '{}' is not fp32 or fp16", *text)};
  }
  if (auto text = args.get("compression")) {
    if (*text == "none")
      overrides.compression = schema::KvCompression::NONE;
    else if (*text == "2bit")
      overrides.compression = schema::KvCompression::TWO_BIT;
    else if (*text == "threshold")
      overrides.compression = schema::KvCompression::THRESHOLD;
    else
      return error{fmt::format("--compression: '{}' is not none, 2bit or threshold", *text)};
  }
  auto replicas = args.get_uint("replicas", 1, runtime::max_replicas);
  if (!replicas)
    return replicas.err();
  if (auto r = replicas.value())
    overrides.replicas = static_cast<std::uint32_t>(*r);
  auto stages = args.get_uint("stages", 2, runtime::max_pipeline_stages);
  if (!stages)
    return stages.err();
  if (auto k = stages.value())
    overrides.stages = static_cast<std::uint32_t>(*k);
  auto micro = args.get_uint("micro-batches", 1, std::uint64_t{1} << 20);
  if (!micro)
    return micro.err();
  if (auto m = micro.value())
    overrides.micro_batches = static_cast<std::uint32_t>(*m);
  auto every = args.get_uint("snapshot-every", 1, std::numeric_limits<std::uint32_t>::max());
  if (!every)
    return every.err();
  if (auto k = every.value())
    overrides.snapshot_every = static_cast<std::uint32_t>(*k);
  auto spares = args.get_uint("spares", 0, runtime::max_pipeline_stages);
  if (!spares)
    return spares.err();
  if (auto n = spares.value())
    overrides.spares = static_cast<std::uint32_t>(*n);
  if (auto text = args.get("schedule")) {
    if (*text == "1f1b")
      overrides.schedule = schema::PipelineSchedule::ONE_FORWARD_ONE_BACKWARD;
    else if (*text == "gpipe")
      overrides.schedule = schema::PipelineSchedule::GPIPE;
    else
      return error{fmt::format("--schedule: '{}' is not 1f1b or gpipe", *text)};
  }
  if (auto text = args.get("repartition-margin")) {
    const auto margin = parse_finite_float(*text);
    if (!margin || *margin < 0.0f)
      return error{fmt::format("--repartition-margin: '{}' is not a share of 0 or more", *text)};
    overrides.repartition_margin = *margin;
  }
  auto pipelines = args.get_uint("pipelines", 1, runtime::max_pipeline_stages);
  if (!pipelines)
    return pipelines.err();
  if (auto r = pipelines.value())
    overrides.pipelines = static_cast<std::uint32_t>(*r);
  return success();
}

} // namespace strom::cli
