#pragma once
// A pipeline's state moved onto a new split of its layers (issue #20, LightDNN's dynamic
// partition): when the stages are re-partitioned, each new stage's parameters, updater state
// and layer state are put together from the snapshots of the old stages that held its
// layers. Stages lay their buffers out layer after layer (model::slices), and the updater's
// state is k blocks (Adam's m, then v) each laid out like the parameters, so a layer's share
// of every section is found from the layers' sizes alone. No CAF here.

#include <cstddef>
#include <span>
#include <vector>

#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/pipeline/stage_replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/compute/snapshots/replica_snapshot.hpp"

namespace strom::compute {

/// What one layer keeps in a model's flat buffers.
struct layer_size {
  std::size_t parameters = 0;
  std::size_t state = 0;
};

/// The sizes of every layer of `net`, first to last.
std::vector<layer_size> layer_sizes_of(const network_layers& net);

/// An old stage's snapshot and the layers it held.
struct stage_source {
  layer_range range;
  const replica_snapshot* saved = nullptr;
};

/// The snapshot of a stage holding layers `target` of a network whose layers are `sizes`,
/// taken from `sources` (in any order, each a contiguous range). Every source's sections are
/// checked against its layers' sizes, the sources must agree on the updater's blocks and
/// progress, and together cover `target`; errors name the range and the section. Sharing
/// state is not carried over (a stage's residual belongs to its old split).
result<replica_snapshot> regroup_stage(std::span<const layer_size> sizes, layer_range target,
                                       std::span<const stage_source> sources);

} // namespace strom::compute
