#pragma once
// Requests whose answer dies with the node that owes it. In CAF 0.17 a request to a remote
// actor whose node crashed or hung is never answered before its own timeout (often minutes),
// and a local actor that took a request and ended without answering never answers it at all
// (there is no broken_promise). A requester that learns of a node's loss some other way (a
// job_master hears member_lost from the scheduler, for crashed and hung nodes alike) keeps
// its requests to that node here and gives them up there: each one's error handler then runs
// with strom_error::peer_lost at once, after the loss itself was handled.
//
// Why the requester's own loss handling and not a monitor in here: a monitor's down message
// races the scheduler's member_lost, so an error handler could run while the node still
// counts as a member (and, say, fail the job instead of going on without it); a hung node
// gives no down message at all.
//
// Giving up enqueues, as the request's answer, the error the requester's handler gets, the
// way CAF's own request timeout does: the handler runs once, and an answer or timeout that
// comes later finds no handler and is dropped by CAF.
//
// CAF answers a request to an actor whose node's connection broke with request_receiver_down
// (or remote_link_unreachable), which may come before the scheduler's member_lost. Such an
// error is held back here until the node is given up (then the handler gets peer_lost, after
// the loss was handled): every caller decides about a lost node in one place, its loss
// handling, never in a request's handler.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

namespace strom::actors {

/// The requests a requester awaits, by the node (any key the requester loses peers by) that
/// owes their answers. Answered ones stay until that node is given up or the requester ends:
/// a job_master makes a few per node and epoch.
class pending_requests {
public:
  /// Remembers that request `answer_id` (a response_handle's id()) awaits `node`'s answer.
  void add(std::uint64_t node, caf::message_id answer_id);

  /// Keeps the error handler of a request to `node` that got request_receiver_down, for
  /// give_up to call.
  void hold_back(std::uint64_t node, std::function<void(caf::error&)> on_error);

  /// Answers every request to `node` still awaited with strom_error::peer_lost, naming the
  /// node and `why`: through `self`'s mailbox, or at once for the ones held back; forgets
  /// them.
  void give_up(caf::scheduled_actor* self, std::uint64_t node, const std::string& why);

private:
  std::map<std::uint64_t, std::vector<caf::message_id>> by_node_;
  std::map<std::uint64_t, std::vector<std::function<void(caf::error&)>>> held_back_;
};

/// A request's handle as request_while_alive returns it: `then` as CAF's, with a
/// request_receiver_down held back until the node is given up.
template <class Handle>
class alive_request {
public:
  alive_request(Handle handle, pending_requests& pending, std::uint64_t node)
    : handle_(std::move(handle)), pending_(&pending), node_(node) {}

  template <class OnAnswer, class OnError>
  void then(OnAnswer on_answer, OnError on_error) {
    handle_.then(std::move(on_answer),
                 [pending = pending_, node = node_, on_error](caf::error& err) mutable {
                   if (err == caf::sec::request_receiver_down ||
                       err == caf::exit_reason::remote_link_unreachable)
                     pending->hold_back(node, on_error);  // member_lost decides first
                   else
                     on_error(err);
                 });
  }

private:
  Handle handle_;
  pending_requests* pending_;  // the requester's state's: it outlives the request's handlers
  std::uint64_t node_;
};

/// `self->request(target, timeout, xs...)`, remembered in `pending` as owed by `node`; use
/// the handle as request's (`.then(on_answer, on_error)`).
template <class Self, class Handle, class... Ts>
auto request_while_alive(Self* self, pending_requests& pending, std::uint64_t node,
                         const Handle& target, caf::timespan timeout, Ts&&... xs) {
  auto handle = self->request(target, timeout, std::forward<Ts>(xs)...);
  pending.add(node, handle.id());
  return alive_request<decltype(handle)>{std::move(handle), pending, node};
}

} // namespace strom::actors
