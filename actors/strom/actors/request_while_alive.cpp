#include "strom/actors/request_while_alive.hpp"

#include <fmt/format.h>

#include "strom/actors/errors.hpp"

namespace strom::actors {

void pending_requests::add(std::uint64_t node, caf::message_id answer_id) {
  by_node_[node].push_back(answer_id);
}

void pending_requests::hold_back(std::uint64_t node, std::function<void(caf::error&)> on_error) {
  held_back_[node].push_back(std::move(on_error));
}

void pending_requests::give_up(caf::scheduled_actor* self, std::uint64_t node,
                               const std::string& why) {
  auto reason =
    make_error(strom_error::peer_lost, fmt::format("node {} was lost before it answered: {}",
                                                   node, why));
  if (auto held = held_back_.extract(node))
    for (auto& on_error : held.mapped()) {  // taken out first: a handler may request anew
      auto err = reason;
      on_error(err);
    }
  const auto owed = by_node_.find(node);
  if (owed == by_node_.end())
    return;
  // A response id with an error is what a request's handler takes as its failed answer; an
  // already answered request has no handler left and CAF drops the message.
  for (const auto answer_id : owed->second)
    self->enqueue(caf::make_mailbox_element(nullptr, answer_id, {}, reason), self->context());
  by_node_.erase(owed);
}

} // namespace strom::actors
