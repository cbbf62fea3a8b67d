#include "strom/actors/averaging/node_average.hpp"

#include <algorithm>
#include <stdexcept>

namespace strom::actors {

node_average::node_average(std::uint32_t workers, std::size_t elements) : workers_(workers) {
  for (auto& one : slots_) {
    one.key = {0, ~std::uint64_t{0}};  // no average yet
    one.sum.assign(elements, 0.0f);
  }
}

bool node_average::add(const average_key& key, std::span<const float> parameters,
                       std::span<const float> updater_state) {
  std::lock_guard lock{mutex_};
  auto& one = slots_[key.index % slots_.size()];
  if (one.sum.size() != 1 + parameters.size() + updater_state.size())
    throw std::invalid_argument("node_average: a contribution of the wrong size");
  if (!(one.key == key)) {  // the first of this average: the slot's last one is done with
    one.key = key;
    one.added = 0;
    one.sum.front() = 1.0f;
    auto rest = std::copy(parameters.begin(), parameters.end(), one.sum.begin() + 1);
    std::copy(updater_state.begin(), updater_state.end(), rest);
  } else {
    one.sum.front() += 1.0f;
    auto out = one.sum.begin() + 1;
    for (const float value : parameters)
      *out++ += value;
    for (const float value : updater_state)
      *out++ += value;
  }
  return ++one.added == workers_;
}

bool node_average::complete(const average_key& key) const {
  std::lock_guard lock{mutex_};
  const auto& one = slots_[key.index % slots_.size()];
  return one.key == key && one.added == workers_;
}

std::span<const float> node_average::sum(const average_key& key) const {
  std::lock_guard lock{mutex_};
  const auto& one = slots_[key.index % slots_.size()];
  if (!(one.key == key) || one.added != workers_)
    throw std::logic_error("node_average: the sum of an average not complete");
  return one.sum;
}

} // namespace strom::actors
