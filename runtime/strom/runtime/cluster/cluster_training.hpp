#pragma once
// Training on a cluster that lives in this process: a scheduler and K nodes, each node its
// own actor system. With one node everything shares one system (Deeplearning4j's
// ParallelWrapper: N workers handing each other their encoded updates directly);
// with more, the nodes talk over the real loopback transport, exactly as separate processes
// would.

#include <cstdint>

#include "strom/compute/result.hpp"
#include "strom/runtime/cluster/in_process_cluster.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/job/metrics_report.hpp"

namespace strom::runtime {

/// Trains `job` (applying the overrides) on a fresh in-process cluster of `shape`.
result<training_report> train_on_cluster(job_spec& job, const local_training_options& options,
                                         const cluster_shape& shape);

} // namespace strom::runtime
