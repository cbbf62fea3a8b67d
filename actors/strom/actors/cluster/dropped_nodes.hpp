#pragma once
// The nodes a scheduler dropped (a heartbeat timeout, a lost connection), remembered by their
// agent's address: a dropped node that is heard from again, e.g. a stopped process that
// resumes, is told so at once instead of living on as an orphan that holds its job's memory.
// Bounded: the oldest entries are forgotten first.

#include <cstddef>
#include <deque>
#include <map>
#include <string>

#include <caf/actor_addr.hpp>

namespace strom::actors {

/// Agents of dropped nodes and why each was dropped.
class dropped_nodes {
public:
  /// Entries kept: far more nodes than a strom cluster has, so only a cluster that drops
  /// nodes over and over forgets its oldest; each entry is an address and a line of text.
  static constexpr std::size_t capacity = 1024;

  /// Remembers that the node of `agent` was dropped for `reason`.
  void remember(const caf::actor_addr& agent, std::string reason);

  /// Why the node of `agent` was dropped, or null when it was not (or is forgotten).
  const std::string* reason_for(const caf::actor_addr& agent) const;

private:
  std::map<caf::actor_addr, std::string> reasons_;
  std::deque<caf::actor_addr> order_;  ///< oldest first
};

} // namespace strom::actors
