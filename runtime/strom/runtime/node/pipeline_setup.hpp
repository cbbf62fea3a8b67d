#pragma once
// How a job is placed on its nodes and how a pipeline job's stages are built from its spec
// (issue #20). The scheduler's placer parses the job, checks each node's memory budget
// (--memory-limit) against what the job puts there, and for a pipeline job profiles its layers
// on synthetic batches (compute time does not depend on the values) and splits them into
// stages by the nodes' speeds (measured when they joined, speed factor included) and budgets
// (compute/partition), a dense layer larger than every node split by output columns into
// blocks of its own (compute/pipeline/column_blocks.hpp). A worker node turns its
// stage assignment into a subnet: the stage's layers, initialised as the whole network's, and
// on the first stage the data.

#include <vector>

#include "strom/actors/job/job_placement.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/pipeline/subnet.hpp"
#include "strom/compute/result.hpp"

namespace strom::runtime {

/// The scheduler's placer (actors/job/job_placement.hpp). A job whose replica does not fit a
/// node's budget fails naming what it needs and what the node offers; a pipeline job gets
/// stages by speed and memory, or fails naming what the model needs and what each node offers.
result<actors::job_placement> place_job(const actors::job_submission& submission,
                                        const std::vector<actors::node_status>& nodes);

/// The subnet of stage `work.stage`; errors name the job and what is wrong with it here.
result<actors::subnet_setup> prepare_stage(const actors::stage_assignment& work);

} // namespace strom::runtime
