#include "tls_flags.hpp"

#include <fmt/format.h>

namespace strom::cli {

namespace {

constexpr const char* ca_option = "tls-ca";
constexpr const char* certificate_option = "tls-cert";
constexpr const char* key_option = "tls-key";

} // namespace

std::vector<option_spec> with_tls_options(std::vector<option_spec> options) {
  options.push_back({ca_option, "FILE",
                     "speak TLS; accept only peers whose certificate this CA signed "
                     "(strom certs init makes one)"});
  options.push_back({certificate_option, "FILE", "with --tls-ca: this process's certificate"});
  options.push_back({key_option, "FILE", "with --tls-ca: this process's private key"});
  return options;
}

result<std::shared_ptr<const runtime::tls_context>> tls_of(const arguments& args) {
  const char* names[] = {ca_option, certificate_option, key_option};
  std::size_t given = 0;
  for (const char* name : names)
    given += args.has(name) ? 1 : 0;
  if (given == 0) {
    runtime::warn_unauthenticated_once();
    return std::shared_ptr<const runtime::tls_context>{};
  }
  for (const char* name : names)
    if (!args.has(name))
      return error{fmt::format("--{} is missing: TLS needs all of --tls-ca, --tls-cert and "
                               "--tls-key", name)};
  return runtime::tls_context::load({*args.get(ca_option), *args.get(certificate_option),
                                     *args.get(key_option)});
}

} // namespace strom::cli
