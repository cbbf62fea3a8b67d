#include "strom/compute/snapshots/replica_snapshot.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

namespace strom::compute {

namespace {

std::vector<float> copy_of(std::span<const float> values) {
  return {values.begin(), values.end()};
}

result<void> check_count(std::string_view section, std::size_t saved, std::size_t needed) {
  if (saved != needed)
    return error{fmt::format("snapshot {} has {} elements, but the receiving model needs {}",
                             section, saved, needed)};
  return success();
}

} // namespace

replica_snapshot take_snapshot(const replica& source, const threshold_encoder* encoder,
                               snapshot_progress progress) {
  replica_snapshot taken;
  taken.parameters = copy_of(source.net().parameters());
  taken.updater_state = copy_of(source.updater_state());
  taken.layer_state = copy_of(source.net().state());
  if (encoder)
    taken.sharing = sharing_snapshot{copy_of(encoder->residual()), encoder->progress()};
  taken.progress = std::move(progress);
  return taken;
}

result<void> apply_snapshot(const replica_snapshot& saved, replica& target,
                            threshold_encoder* encoder) {
  if (saved.sharing.has_value() != (encoder != nullptr))
    return error{fmt::format("snapshot {} sharing state, but the receiving worker {}",
                             saved.sharing ? "carries" : "carries no",
                             encoder ? "shares updates" : "does not share updates")};
  auto& net = target.net();
  for (auto check :
       {check_count("parameters", saved.parameters.size(), net.parameters().size()),
        check_count("updater state", saved.updater_state.size(), target.updater_state().size()),
        check_count("layer state", saved.layer_state.size(), net.state().size()),
        check_count("sharing residual", saved.sharing ? saved.sharing->residual.size() : 0,
                    encoder ? encoder->elements() : 0)}) {
    if (!check.ok())
      return check;
  }
  std::copy(saved.parameters.begin(), saved.parameters.end(), net.parameters().begin());
  std::copy(saved.updater_state.begin(), saved.updater_state.end(),
            target.updater_state().begin());
  std::copy(saved.layer_state.begin(), saved.layer_state.end(), net.state().begin());
  target.set_progress(saved.progress.iteration, saved.progress.epoch);
  if (encoder)
    encoder->resume(saved.sharing->residual, saved.sharing->encoder);
  return success();
}

} // namespace strom::compute
