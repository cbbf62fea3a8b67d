#pragma once
// "Did you mean": the known name closest to a mistyped command or option.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strom::cli {

/// The name in `known` closest to `typed` when it is within two edits (a typo, not another
/// word); the first of equally close ones.
std::optional<std::string> nearest_name(std::string_view typed,
                                        const std::vector<std::string>& known);

} // namespace strom::cli
