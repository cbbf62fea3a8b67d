#pragma once
// The node agent's steps shared by the files that make it up: node_agent.cpp (joining, jobs,
// rounds, evaluation, restores) and node_wiring.cpp (a mesh job's relay edges, one topology
// update at a time). Internal to those files.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <caf/all.hpp>
#include <fmt/format.h>

#include "strom/actors/errors.hpp"
#include "strom/actors/node_agent.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors::agent_steps {

using self_ptr = caf::stateful_actor<node_agent_state>*;

// -- node_agent.cpp ---------------------------------------------------------------------------

/// Runs `work` on a thread of its own (a detached blocking actor), so that the agent keeps
/// answering heartbeats; `work` tells the agent when it is done.
void run_aside(self_ptr self, std::function<void(caf::blocking_actor*, const caf::actor&)> work);

/// Calls `fn`, turning an escaped exception into an error.
template <class T, class Fn>
result<T> guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return error{e.what()};
  }
}

/// What work aside for job `job_id` left in `slot`, with the `pending` promise it answers,
/// both taken; nothing when none waits, or when the job was stopped or the work failed (the
/// promise is answered with why then).
template <class T>
std::optional<std::pair<caf::response_promise, T>>
take_aside_outcome(self_ptr self, std::optional<caf::response_promise>& pending,
                   std::shared_ptr<std::optional<result<T>>>& slot, std::uint64_t job_id) {
  auto& st = self->state;
  if (!pending || !slot || !slot->has_value())
    return std::nullopt;
  auto promise = std::move(*pending);
  pending.reset();
  auto outcome = std::move(**slot);
  slot.reset();
  if (!st.run || st.run->job_id != job_id) {
    promise.deliver(make_error(strom_error::job_cancelled,
                               fmt::format("job {} was stopped", job_id)));
    return std::nullopt;
  }
  if (!outcome) {
    promise.deliver(make_error(strom_error::node_failed, outcome.err().message));
    return std::nullopt;
  }
  return std::make_pair(std::move(promise), std::move(*outcome));
}

// -- node_wiring.cpp --------------------------------------------------------------------------

/// A topology_update arrived. A job_master that remaps twice quickly (two losses in a row, a
/// loss during a join) sends the next one while the node still wires the last: only the
/// newest waits to be wired next, and every request is answered.
void take_update(self_ptr self, const node_agent_setup& setup, const topology_update& update);

/// The helper of a wiring is done: the parent's relay becomes ours' peer and the job_master
/// hears that this edge is wired (or why not); then the next update, if one came meanwhile.
void wired(self_ptr self, const node_agent_setup& setup, std::uint64_t job_id);

} // namespace strom::actors::agent_steps
