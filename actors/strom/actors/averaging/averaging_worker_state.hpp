#pragma once
// A parameter-averaging worker's part of the trainer (trainer_averaging.cpp): the totals the
// relay brings and the average its next step waits for (parameter_averaging.hpp).

#include <cstdint>
#include <optional>

#include "strom/actors/averaging/parameter_averaging.hpp"

namespace strom::actors {

/// What an averaging trainer keeps.
struct averaging_worker_state {
  averaging_totals totals;                 ///< the averages' totals from the relay
  std::optional<std::uint64_t> awaiting;   ///< the average of this round the next step waits for
  std::uint64_t common_steps = 0;          ///< of the round (round_work)
};

} // namespace strom::actors
