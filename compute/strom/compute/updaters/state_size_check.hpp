#pragma once
// The preconditions every updater checks before touching its buffers: a buffer of the wrong
// size is a wiring bug in the caller, so it throws rather than reading out of bounds.

#include <cstddef>
#include <string_view>

namespace strom::compute {

/// Throws std::invalid_argument naming `updater_name` unless `actual` == `expected`.
void require_state_size(std::string_view updater_name, std::size_t expected, std::size_t actual);

/// Throws std::invalid_argument naming `buffer` (parameters, residual) unless its `size` is
/// the number of `gradients`.
void require_gradient_size(std::string_view buffer, std::size_t size, std::size_t gradients);

} // namespace strom::compute
