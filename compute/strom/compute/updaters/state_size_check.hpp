#pragma once
// The one precondition every updater checks before touching its state: a state buffer of the
// wrong size is a wiring bug in the caller, so it throws rather than reading out of bounds.

#include <cstddef>
#include <string_view>

namespace strom::compute {

/// Throws std::invalid_argument naming `updater_name` unless `actual` == `expected`.
void require_state_size(std::string_view updater_name, std::size_t expected, std::size_t actual);

} // namespace strom::compute
