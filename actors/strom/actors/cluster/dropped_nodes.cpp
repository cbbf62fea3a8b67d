#include "strom/actors/cluster/dropped_nodes.hpp"

namespace strom::actors {

void dropped_nodes::remember(const caf::actor_addr& agent, std::string reason) {
  if (!reasons_.insert_or_assign(agent, std::move(reason)).second)
    return;  // known already: only its reason changed
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
