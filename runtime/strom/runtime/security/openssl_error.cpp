#include "strom/runtime/security/openssl_error.hpp"

#include <openssl/err.h>

namespace strom::runtime {

std::string take_openssl_error(const char* fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return fallback;
  if (const char* reason = ERR_reason_error_string(code))
    return reason;
  char text[256] = {};
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

} // namespace strom::runtime
