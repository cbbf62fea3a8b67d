#pragma once
// What `strom launch` shares with `strom submit`: submit's option table, so that launch
// accepts and passes on every submit option without a second copy of it.

#include "options/arguments.hpp"

namespace strom::cli {

/// The options and usage of `strom submit` (a function: tables in other files are built
/// during static initialisation, in no set order).
const command_spec& submit_command_spec();

} // namespace strom::cli
