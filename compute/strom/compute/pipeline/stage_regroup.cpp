#include "strom/compute/pipeline/stage_regroup.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace strom::compute {

namespace {

/// Where each layer of `range` starts in a stage's parameters and state, and their totals.
struct range_layout {
  std::vector<std::size_t> parameter_offsets;  ///< by layer of the range, then the total
  std::vector<std::size_t> state_offsets;
};

range_layout layout_of(std::span<const layer_size> sizes, layer_range range) {
  range_layout layout;
  std::size_t parameters = 0;
  std::size_t state = 0;
  for (auto l = range.first; l < range.end; ++l) {
    layout.parameter_offsets.push_back(parameters);
    layout.state_offsets.push_back(state);
    parameters += sizes[l].parameters;
    state += sizes[l].state;
  }
  layout.parameter_offsets.push_back(parameters);
  layout.state_offsets.push_back(state);
  return layout;
}

std::string range_text(layer_range range) {
  return fmt::format("layers [{}, {})", range.first, range.end);
}

/// Whether `range` lies within a network of `layers` layers and holds at least one.
bool valid(layer_range range, std::size_t layers) {
  return range.first < range.end && range.end <= layers;
}

/// The updater's blocks in `source`: its state over its parameters (0 without an updater
/// state), or an error naming the source.
result<std::size_t> blocks_of(const stage_source& source, std::size_t parameters) {
  const auto state = source.saved->updater_state.size();
  if (parameters == 0 ? state != 0 : state % parameters != 0)
    return error{fmt::format("the snapshot of {} has {} floats of updater state for {} "
                             "parameters", range_text(source.range), state, parameters)};
  return parameters == 0 ? 0 : state / parameters;
}

} // namespace

std::vector<layer_size> layer_sizes_of(const network_layers& net) {
  std::vector<layer_size> sizes;
  for (const auto& layer : net.layers)
    sizes.push_back({layer->parameter_count(), layer->state_count()});
  return sizes;
}

result<replica_snapshot> regroup_stage(std::span<const layer_size> sizes, layer_range target,
                                       std::span<const stage_source> sources) {
  if (!valid(target, sizes.size()))
    return error{fmt::format("{} are not a stage of a network of {} layers", range_text(target),
                             sizes.size())};
  const stage_source* progress_from = nullptr;
  std::optional<std::size_t> blocks;
  for (const auto& source : sources) {
    if (!source.saved || !valid(source.range, sizes.size()))
      return error{fmt::format("no snapshot of {} in a network of {} layers",
                               range_text(source.range), sizes.size())};
    const auto layout = layout_of(sizes, source.range);
    const auto& saved = *source.saved;
    if (saved.parameters.size() != layout.parameter_offsets.back()
        || saved.layer_state.size() != layout.state_offsets.back())
      return error{fmt::format("the snapshot of {} holds {} parameters and {} state, its layers "
                               "have {} and {}", range_text(source.range),
                               saved.parameters.size(), saved.layer_state.size(),
                               layout.parameter_offsets.back(), layout.state_offsets.back())};
    auto k = blocks_of(source, saved.parameters.size());
    if (!k)
      return k.err();
    // A stage without parameters says nothing about the updater's blocks.
    if (!saved.parameters.empty()) {
      if (blocks && *blocks != *k)
        return error{fmt::format("the snapshot of {} has {} updater blocks, another {}",
                                 range_text(source.range), *k, *blocks)};
      blocks = *k;
    }
    if (progress_from && (progress_from->saved->progress.iteration != saved.progress.iteration
                          || progress_from->saved->progress.epoch != saved.progress.epoch))
      return error{fmt::format("the snapshots of {} and {} were taken at different steps",
                               range_text(progress_from->range), range_text(source.range))};
    progress_from = &source;
  }
  if (!progress_from)
    return error{fmt::format("no snapshot to build {} from", range_text(target))};
  const auto k = blocks.value_or(0);
  const auto layout = layout_of(sizes, target);
  const auto parameters = layout.parameter_offsets.back();
  replica_snapshot out;
  out.parameters.resize(parameters);
  out.updater_state.resize(k * parameters);
  out.layer_state.resize(layout.state_offsets.back());
  out.progress = progress_from->saved->progress;
  out.progress.origins.clear();
  for (auto l = target.first; l < target.end; ++l) {
    const auto from = std::find_if(sources.begin(), sources.end(), [l](const auto& source) {
      return source.range.first <= l && l < source.range.end;
    });
    if (from == sources.end())
      return error{fmt::format("no snapshot holds layer {} of {}", l, range_text(target))};
    const auto source_layout = layout_of(sizes, from->range);
    const auto& saved = *from->saved;
    const auto i = l - from->range.first;  // the layer in the source
    const auto o = l - target.first;       // and in the target
    const auto n = sizes[l].parameters;
    const auto source_parameters = saved.parameters.size();
    for (std::size_t b = 0; b <= k; ++b) {  // block 0: the parameters; 1..k: updater blocks
      const auto& in = b == 0 ? saved.parameters : saved.updater_state;
      auto& to = b == 0 ? out.parameters : out.updater_state;
      const auto in_block = b == 0 ? 0 : (b - 1) * source_parameters;
      const auto out_block = b == 0 ? 0 : (b - 1) * parameters;
      std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(in_block
                                                            + source_layout.parameter_offsets[i]),
                  n, to.begin() + static_cast<std::ptrdiff_t>(out_block
                                                              + layout.parameter_offsets[o]));
    }
    std::copy_n(saved.layer_state.begin()
                  + static_cast<std::ptrdiff_t>(source_layout.state_offsets[i]),
                sizes[l].state,
                out.layer_state.begin() + static_cast<std::ptrdiff_t>(layout.state_offsets[o]));
  }
  return out;
}

} // namespace strom::compute
