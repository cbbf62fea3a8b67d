#include "strom/runtime/cluster/cluster_training.hpp"

#include <fmt/format.h>

#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/node/node_startup.hpp"
#include "strom/runtime/node/training_setup.hpp"

namespace strom::runtime {

result<training_report> train_on_cluster(job_spec& job, const local_training_options& options,
                                         const cluster_shape& shape) {
  const auto run_start = training_clock::now();
  if (shape.nodes == 0 || shape.workers == 0)
    return error{fmt::format("{}: a cluster needs at least one node and one worker per node",
                             job.source())};
  // Refused before make_submission makes the run's checkpoint folder.
  const auto mode = options.mode.value_or(job.reader().getDistributed().getMode());
  if (mode == schema::TrainingMode::KVSTORE && shape.servers == 0)
    return error{fmt::format("{}: distributed.mode kvstore needs at least one server node "
                             "(--servers S)",
                             job.source())};
  auto submission = make_submission(job, options, shape.nodes, shape.servers);
  if (!submission)
    return submission.err();

  auto cluster = in_process_cluster::start(shape, options.watch, options.timeouts);
  if (!cluster)
    return error{fmt::format("{}: {}", job.source(), cluster.err().message)};
  auto report = run_job((*cluster)->home(), (*cluster)->scheduler(), *submission, options.observer);
  if (!report) {
    // A job's failure often names its file already (a node's data error): once is enough.
    const auto& why = report.err().message;
    return error{why.find(job.source()) != std::string::npos
                   ? why
                   : fmt::format("{}: {}", job.source(), why)};
  }
  report->wall_seconds = seconds_since(run_start);
  return report;
}

} // namespace strom::runtime
