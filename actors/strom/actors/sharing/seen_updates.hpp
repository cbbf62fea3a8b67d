#pragma once
// Which (origin, sequence) update frames a node has already seen. Sequences are dense per
// origin, so each origin keeps "everything below `contiguous` was seen" plus the few seen
// out of order above it: memory stays bounded by the reordering, not by the run length.

#include <cstdint>
#include <set>
#include <unordered_map>

namespace strom::actors {

/// De-duplication keys of update frames.
class seen_updates {
public:
  /// Records (origin, sequence); false when it was recorded before.
  bool insert(std::uint64_t origin, std::uint64_t sequence);

private:
  struct per_origin {
    std::uint64_t contiguous = 0;        // every sequence below this was seen
    std::set<std::uint64_t> above;       // seen sequences >= contiguous
  };
  std::unordered_map<std::uint64_t, per_origin> origins_;
};

} // namespace strom::actors
