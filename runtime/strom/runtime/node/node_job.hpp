#pragma once
// How a node turns a job assignment into running state: parse the job text it was sent,
// build its workers' replicas, load its share of the data and, on the job's first node, the
// test set and the per-epoch evaluation and checkpoint.

#include <optional>

#include "strom/actors/cluster/node_agent.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::runtime {

/// The node_job for `assignment`, its workers stepping on `device` where set (the node's
/// --device) and on the job's training.device otherwise; errors name the job and what is
/// wrong with it here. The data loads beside the replicas being built; `built` is told the
/// first replica once they are (a joiner's restore fetches its snapshot meanwhile).
result<actors::node_job> prepare_node_job(const actors::job_assignment& assignment,
                                          std::optional<schema::Device> device,
                                          const actors::replicas_built& built);

} // namespace strom::runtime
