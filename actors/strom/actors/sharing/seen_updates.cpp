#include "strom/actors/sharing/seen_updates.hpp"

namespace strom::actors {

bool seen_updates::insert(std::uint64_t origin, std::uint64_t sequence) {
  auto& seen = origins_[origin];
  if (sequence < seen.contiguous)
    return false;
  if (sequence != seen.contiguous)
    return seen.above.insert(sequence).second;
  ++seen.contiguous;
  while (!seen.above.empty() && *seen.above.begin() == seen.contiguous) {
    seen.above.erase(seen.above.begin());
    ++seen.contiguous;
  }
  return true;
}

} // namespace strom::actors
