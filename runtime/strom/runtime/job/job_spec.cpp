#include "strom/runtime/job/job_spec.hpp"

#include <capnp/serialize-text.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "strom/actors/sharing/topology.hpp"
#include "strom/compute/encoders/threshold_encoder_from_spec.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"
#include "strom/runtime/job/capnp_text_file.hpp"

namespace strom::runtime {

namespace {

/// Job files are small; anything larger is a mistake (a data file passed as a job).
/// Cap'n Proto's text parser recurses once per ( or [ and has no depth limit of its own: a
/// few thousand levels overflow the stack. A job needs 6 (Job > training > updater > schedule
/// > step > value); 64 leaves room for any schema growth and stays far from the stack's end,
/// under AddressSanitizer's larger frames too.
constexpr text_file_kind job_file_kind{"job file", 1 << 20, 64, 10};

/// Workers per node a job may ask for: the bound of `strom train --workers`
/// (runtime/cli/commands.hpp).
constexpr std::uint32_t max_workers_per_node = 1024;

/// A job's name becomes its checkpoint's file name (NAME.ckpt): at most this many bytes
/// keeps it within the 255 bytes file systems allow.
constexpr std::size_t max_job_name_bytes = 200;

} // namespace

void resolve_data_paths(schema::Job::Builder job, const std::string& base_dir) {
  auto resolve = [&](capnp::Text::Reader text) {
    std::filesystem::path p{text.cStr()};
    if (p.empty() || p.is_absolute())
      return std::string{text.cStr()};
    return (std::filesystem::absolute(base_dir) / p).lexically_normal().string();
  };
  for (auto source : {job.getData().getTrain(), job.getData().getTest()}) {
    if (source.isIdx()) {
      auto idx = source.getIdx();
      idx.setImages(resolve(idx.getImages()));
      idx.setLabels(resolve(idx.getLabels()));
    } else if (source.isCsv()) {
      auto csv = source.getCsv();
      csv.setPath(resolve(csv.getPath()));
    }
  }
}

job_spec::job_spec(schema::Job::Reader job, std::string source)
  : message_(std::make_shared<capnp::MallocMessageBuilder>()), source_(std::move(source)) {
  message_->setRoot(job);
}

schema::Job::Reader job_spec::reader() const {
  return message_->getRoot<schema::Job>().asReader();
}

schema::Job::Builder job_spec::builder() { return message_->getRoot<schema::Job>(); }

result<job_spec> parse_job_text(std::string_view text, const std::string& source,
                                const std::string& base_dir) {
  capnp::MallocMessageBuilder message;
  auto job = message.initRoot<schema::Job>();
  if (auto decoded = decode_capnp_text(text, source, job_file_kind, capnp::toDynamic(job));
      !decoded)
    return decoded.err();
  resolve_data_paths(job, base_dir);
  return job_spec{job.asReader(), source};
}

std::string to_text(const job_spec& job) {
  return capnp::TextCodec{}.encode(job.reader()).cStr();
}

result<std::string> read_job_file(const std::string& path) {
  return read_text_file(path, job_file_kind);
}

result<void> check_job(const job_spec& job) {
  auto spec = job.reader();
  auto prefixed = [&](const error& e) {
    return error{fmt::format("{}: {}", job.source(), e.message)};
  };
  const std::string_view name{spec.getName().cStr(), spec.getName().size()};
  if (name.size() > max_job_name_bytes || name.find('/') != std::string_view::npos
      || name.starts_with('.'))
    return error{fmt::format("{}: name: '{}' cannot name a checkpoint file (at most {} bytes, "
                             "no '/', not starting with '.')",
                             job.source(), name.substr(0, max_job_name_bytes), max_job_name_bytes)};
  // The same checks as building a worker would run, without building anything large.
  if (auto ok = compute::check_training(spec.getTraining()); !ok)
    return prefixed(ok.err());
  if (auto layers = compute::make_layers(spec.getNetwork(), 0); !layers)
    return prefixed(layers.err());
  if (auto rule = compute::make_updater(spec.getTraining().getUpdater()); !rule)
    return prefixed(rule.err());
  if (auto schedule = compute::make_schedule(spec.getTraining().getUpdater()); !schedule)
    return prefixed(schedule.err());
  // Checked even when one worker will not share: the job may run on more later.
  auto distributed = spec.getDistributed();
  if (spec.getTraining().getDevice() == schema::Device::CUDA
      && distributed.getMode() == schema::TrainingMode::PIPELINE)
    return error{fmt::format("{}: training.device: cuda runs the data-parallel modes (shared, "
                             "averaging, kvstore); a pipeline's stages train on the CPU",
                             job.source())};
  if (auto sharing = compute::make_threshold_encoder_options(distributed.getSharing()); !sharing)
    return prefixed(sharing.err());
  const auto workers = distributed.getWorkersPerNode();
  if (workers < 1 || workers > max_workers_per_node)
    return error{fmt::format("{}: distributed.workersPerNode: {} is outside [1, {}]",
                             job.source(), workers, max_workers_per_node)};
  const auto fanout = distributed.getFanout();
  if (fanout < 1 || fanout > actors::max_fanout)
    return error{fmt::format("{}: distributed.fanout: {} is outside [1, {}]", job.source(),
                             fanout, actors::max_fanout)};
  if (const auto replicas = distributed.getReplicas(); replicas < 1 || replicas > max_replicas)
    return error{fmt::format("{}: distributed.replicas: {} is outside [1, {}]", job.source(),
                             replicas, max_replicas)};
  if (distributed.getBigArrayBound() == 0)
    return error{fmt::format("{}: distributed.bigArrayBound: must be at least 1, got 0",
                             job.source())};
  if (const auto two_bit = distributed.getTwoBitThreshold(); !(two_bit > 0.0f) || !std::isfinite(two_bit))
    return error{fmt::format("{}: distributed.twoBitThreshold: {} must be a positive number",
                             job.source(), two_bit)};
  if (distributed.getKvstore() == schema::KvStoreSync::DIST_ASYNC
      && !distributed.getServerOptimizer())
    return error{fmt::format("{}: distributed.serverOptimizer: false needs kvstore dist_sync: "
                             "with dist_async every worker would apply different gradients",
                             job.source())};
  if (distributed.getPipelines() == 0 || distributed.getPipelines() > max_pipeline_stages)
    return error{fmt::format("{}: distributed.pipelines: {} is outside [1, {}]", job.source(),
                             distributed.getPipelines(), max_pipeline_stages)};
  if (distributed.getStages() == 1 || distributed.getStages() > max_pipeline_stages)
    return error{fmt::format("{}: distributed.stages: {} is outside [2, {}] (0: one stage a "
                             "worker node)", job.source(), distributed.getStages(),
                             max_pipeline_stages)};
  if (distributed.getMicroBatches() > spec.getTraining().getBatchSize())
    return error{fmt::format("{}: distributed.microBatches: {} is more than the {} samples of a "
                             "minibatch (training.batchSize)", job.source(),
                             distributed.getMicroBatches(), spec.getTraining().getBatchSize())};
  if (distributed.getSnapshotEvery() < 1)
    return error{fmt::format("{}: distributed.snapshotEvery: must be at least 1 step, got 0",
                             job.source())};
  if (const auto margin = distributed.getRepartitionMargin();
      !(margin >= 0.0f) || !std::isfinite(margin))
    return error{fmt::format("{}: distributed.repartitionMargin: {} must be a share of 0 or more "
                             "(0: never re-partition)", job.source(), margin)};
  if (distributed.getSpares() > max_pipeline_stages)
    return error{fmt::format("{}: distributed.spares: {} is more than {}", job.source(),
                             distributed.getSpares(), max_pipeline_stages)};
  if (distributed.getStaleness() > max_staleness)
    return error{fmt::format("{}: distributed.staleness: {} is more than {} steps (0: "
                             "synchronous)",
                             job.source(), distributed.getStaleness(), max_staleness)};
  const auto frequency = distributed.getAveragingFrequency();
  if (frequency < 1 || frequency > max_averaging_frequency)
    return error{fmt::format("{}: distributed.averagingFrequency: {} is outside [1, {}]",
                             job.source(), frequency, max_averaging_frequency)};
  return success();
}

actors::topology_options topology_of(const job_spec& job) {
  const auto distributed = job.reader().getDistributed();
  actors::topology_options options;
  switch (distributed.getTopology()) {
    case schema::Topology::PLAIN: options.kind = actors::topology_kind::plain; break;
    case schema::Topology::MESH: options.kind = actors::topology_kind::mesh; break;
    case schema::Topology::AUTO: options.kind = actors::topology_kind::automatic; break;
  }
  options.fanout = distributed.getFanout();
  return options;
}

schema::Topology to_schema(actors::topology_kind kind) {
  switch (kind) {
    case actors::topology_kind::mesh: return schema::Topology::MESH;
    case actors::topology_kind::automatic: return schema::Topology::AUTO;
    case actors::topology_kind::plain: break;
  }
  return schema::Topology::PLAIN;
}

const char* to_string(schema::TrainingMode mode) {
  switch (mode) {
    case schema::TrainingMode::AVERAGING: return "averaging";
    case schema::TrainingMode::KVSTORE: return "kvstore";
    case schema::TrainingMode::PIPELINE: return "pipeline";
    case schema::TrainingMode::SHARED: break;
  }
  return "shared";
}

result<schema::TrainingMode> parse_training_mode(std::string_view text) {
  for (auto mode : {schema::TrainingMode::SHARED, schema::TrainingMode::AVERAGING,
                    schema::TrainingMode::KVSTORE, schema::TrainingMode::PIPELINE})
    if (text == to_string(mode))
      return mode;
  return error{fmt::format("mode '{}' is not shared, averaging, kvstore or pipeline", text)};
}

result<schema::Device> parse_device(std::string_view text) {
  if (text == "cpu")
    return schema::Device::CPU;
  if (text == "cuda")
    return schema::Device::CUDA;
  return error{fmt::format("'{}' is not cpu or cuda", text)};
}

result<job_spec> load_job_file(const std::string& path) {
  auto text = read_job_file(path);
  if (!text)
    return text.err();
  auto dir = std::filesystem::path{path}.parent_path().string();
  auto job = parse_job_text(*text, path, dir.empty() ? "." : dir);
  if (!job)
    return job;
  if (auto ok = check_job(*job); !ok)
    return ok.err();
  return job;
}

} // namespace strom::runtime
