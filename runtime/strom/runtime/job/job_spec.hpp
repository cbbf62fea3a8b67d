#pragma once
// A job spec: one Cap'n Proto Job message (schema/job.capnp), read from a job file written in
// Cap'n Proto's text format. The same message travels to other nodes and into checkpoints.

#include <memory>
#include <string>
#include <string_view>

#include <capnp/message.h>

#include "strom/actors/sharing/topology.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::runtime {

/// An owned, mutable job message plus where it came from.
class job_spec {
public:
  /// A copy of `job`; `source` names it in errors ("examples/fashion_mlp.job").
  job_spec(schema::Job::Reader job, std::string source);

  /// The job, for reading.
  schema::Job::Reader reader() const;
  /// The job, for overrides such as --epochs.
  schema::Job::Builder builder();
  /// The file (or other origin) the job came from.
  const std::string& source() const noexcept { return source_; }

private:
  std::shared_ptr<capnp::MallocMessageBuilder> message_;
  std::string source_;
};

/// Parses job text; errors read "SOURCE:LINE:COLUMN: problem" and quote the line. Relative
/// data paths are made absolute against `base_dir`. Text with a NUL byte, or nested deeper
/// than Cap'n Proto's recursive parser can safely go, is refused before parsing.
result<job_spec> parse_job_text(std::string_view text, const std::string& source,
                                const std::string& base_dir);

/// Makes relative data paths of `job` absolute against `base_dir`, so the job means the same
/// thing wherever it travels (to other nodes, into checkpoints).
void resolve_data_paths(schema::Job::Builder job, const std::string& base_dir);

/// The job in Cap'n Proto text format, as parse_job_text reads it: how a job travels to
/// other nodes (data paths are absolute by then, overrides applied).
std::string to_text(const job_spec& job);

/// The text of the job file at `path`; a file over the size limit is refused before it is
/// read, and a device or pipe is read no further than one byte past the limit.
result<std::string> read_job_file(const std::string& path);

/// Checks every setting of the job (number ranges, finite floats, the network's sizes, the
/// updater, the sharing options, the name) without allocating anything in proportion to the
/// model; errors read "SOURCE: field.path: problem".
result<void> check_job(const job_spec& job);

/// The job's distributed.topology and distributed.fanout.
actors::topology_options topology_of(const job_spec& job);

/// `kind` as the job file's enum (distributed.topology).
schema::Topology to_schema(actors::topology_kind kind);

/// Steps between averages a job may ask for (distributed.averagingFrequency): beyond a
/// million the replicas effectively never meet.
inline constexpr std::uint32_t max_averaging_frequency = 1'000'000;

/// The most steps a worker may run ahead of the slowest (distributed.staleness): beyond a
/// million it is no bound at all, and a larger value is surely a typo.
inline constexpr std::uint32_t max_staleness = 1'000'000;

/// Servers a key range may be replicated on (distributed.replicas, chain replication).
inline constexpr std::uint32_t max_replicas = 16;

/// Stages a pipeline job may be split into (distributed.stages): one a node, and a network of
/// more than a thousand layers is beyond any job file strom reads.
inline constexpr std::uint32_t max_pipeline_stages = 1024;

/// The training mode named `text` (shared, averaging, kvstore, pipeline: distributed.mode).
result<schema::TrainingMode> parse_training_mode(std::string_view text);

/// The device named `text` (cpu, cuda: training.device, --device).
result<schema::Device> parse_device(std::string_view text);

/// The mode's name in job files and metrics ("shared", "averaging", "kvstore", "pipeline").
const char* to_string(schema::TrainingMode mode);

/// Reads, parses and checks a job file; relative data paths resolve against the file's folder.
result<job_spec> load_job_file(const std::string& path);

} // namespace strom::runtime
