#pragma once
// --tls-ca, --tls-cert and --tls-key: the one parser of the TLS options every command that
// talks to a cluster takes (node, submit, attach, status, cancel).

#include <memory>
#include <vector>

#include "arguments.hpp"
#include "strom/runtime/security/tls_context.hpp"

namespace strom::cli {

/// `options` with the three TLS options appended.
std::vector<option_spec> with_tls_options(std::vector<option_spec> options);

/// The TLS identity `args` names: null when none of the three options is given (and then
/// says once that this process is unauthenticated). Errors when only some are given, or name
/// the file that cannot be read or is not what its option needs.
result<std::shared_ptr<const runtime::tls_context>> tls_of(const arguments& args);

} // namespace strom::cli
