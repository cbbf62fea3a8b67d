#include "strom/actors/job/stall_watch.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace strom::actors {

namespace {

/// Waiting workers per origin they wait for.
std::map<std::uint64_t, std::size_t> count_waits(const std::vector<stalled_node>& nodes) {
  std::map<std::uint64_t, std::size_t> waits;
  for (const auto& node : nodes)
    if (node.answer)
      for (const auto& worker : node.answer->workers)
        for (const auto origin : worker.waiting_for)
          ++waits[origin];
  return waits;
}

/// What the named node's workers do, when it answered: the one holding the others back is a
/// worker that is not waiting itself (busy in a step), else the one with the fewest steps.
std::string doing(const node_activity& answer) {
  const worker_activity* holder = nullptr;
  for (const auto& worker : answer.workers) {
    const bool busy = !worker.answered || (!worker.waiting && !worker.finished);
    const bool holder_busy =
      holder && (!holder->answered || (!holder->waiting && !holder->finished));
    if (!holder || (busy && !holder_busy)
        || (busy == holder_busy && worker.steps < holder->steps))
      holder = &worker;
  }
  if (!holder)
    return "it has no workers in the round";
  if (!holder->answered)
    return fmt::format("its worker {} does not answer (busy in step {} of round {})",
                       holder->worker, holder->steps + 1, holder->round);
  if (holder->finished)
    return fmt::format("its worker {} finished round {} after {} steps and waits for drains",
                       holder->worker, holder->round, holder->steps);
  if (holder->waiting)
    return fmt::format("its worker {} waits after step {} of round {} for node(s) {}",
                       holder->worker, holder->steps, holder->round,
                       fmt::join(holder->waiting_for, ", "));
  return fmt::format("its worker {} is in step {} of round {}", holder->worker,
                     holder->steps + 1, holder->round);
}

} // namespace

std::optional<stall_finding> stall_verdict(const std::vector<stalled_node>& nodes) {
  const auto waits = count_waits(nodes);
  const stalled_node* named = nullptr;
  std::size_t named_waits = 0;
  for (const auto& node : nodes) {
    const auto found = waits.find(node.node_id);
    const std::size_t count = found == waits.end() ? 0 : found->second;
    // The most waited for; without waits, a node that did not answer; ties: the quietest.
    const bool better =
      !named || count > named_waits
      || (count == named_waits && count == 0 && !node.answer && named->answer)
      || (count == named_waits && (!node.answer) == (!named->answer)
          && node.quiet_seconds > named->quiet_seconds);
    if (better) {
      named = &node;
      named_waits = count;
    }
  }
  if (!named || (named_waits == 0 && named->answer))
    return std::nullopt;
  const auto what = named->answer ? doing(*named->answer)
                                  : std::string{"it does not answer (stopped or hung)"};
  return stall_finding{
    named->node_id, named_waits,
    fmt::format("waiting for {}: {}; it last reported step {} of round {}, {:.1f} s ago; {} "
                "worker{} wait{} for it",
                named->node, what, named->steps, named->round, named->quiet_seconds,
                named_waits, named_waits == 1 ? "" : "s", named_waits == 1 ? "s" : "")};
}

} // namespace strom::actors
