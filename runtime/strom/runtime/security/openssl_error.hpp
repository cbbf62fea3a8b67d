#pragma once
// OpenSSL reports failures on a thread-local queue of codes; strom's messages want one short
// reason in words ("certificate verify failed"), and a queue left behind would be blamed on
// the next, unrelated call.

#include <string>

namespace strom::runtime {

/// The reason of the oldest error on this thread's OpenSSL queue, which it empties;
/// `fallback` when the queue was empty.
std::string take_openssl_error(const char* fallback = "unknown OpenSSL error");

} // namespace strom::runtime
