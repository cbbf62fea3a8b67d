#include "strom/actors/dropped_nodes.hpp"

namespace strom::actors {

void dropped_nodes::remember(const caf::actor_addr& agent, std::string reason) {
  auto [entry, added] = reasons_.insert_or_assign(agent, std::move(reason));
  if (!added)
    return;
  order_.push_back(agent);
  if (order_.size() > capacity) {
    reasons_.erase(order_.front());
    order_.pop_front();
  }
}

const std::string* dropped_nodes::reason_for(const caf::actor_addr& agent) const {
  auto found = reasons_.find(agent);
  return found == reasons_.end() ? nullptr : &found->second;
}

} // namespace strom::actors
