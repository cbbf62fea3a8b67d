#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "strom/runtime/security/certificate_authority.hpp"
#include "strom/runtime/security/peer_role.hpp"

namespace strom::cli {

namespace {

const command_spec init_spec{
  "strom certs init DIR --nodes NAME,... [--clients NAME,...]",
  "Creates a cluster's certificate authority (DIR/ca.pem, DIR/ca.key) and a certificate and\n"
  "key per name (DIR/NAME.pem, DIR/NAME.key; keys with mode 0600), signed by it. A node\n"
  "certificate (the scheduler's too) may join a cluster; a client certificate may submit,\n"
  "attach, ask for status and cancel. The role is in the certificate as the subjectAltName\n"
  "URI strom:role:node or strom:role:client. Existing files are never overwritten.\n"
  "Use them with --tls-ca DIR/ca.pem --tls-cert DIR/NAME.pem --tls-key DIR/NAME.key.",
  {
    {"nodes", "NAME,...", "names that get node certificates (e.g. scheduler,w1,w2)"},
    {"clients", "NAME,...", "names that get client certificates (e.g. alice)"},
  },
  1,
};

/// The comma-separated names of `option`; an empty list when it is absent.
std::vector<std::string> names_of(const arguments& args, const char* option) {
  std::vector<std::string> names;
  const auto text = args.get(option).value_or("");
  for (std::size_t start = 0; start < text.size();) {
    const auto comma = std::min(text.find(',', start), text.size());
    names.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

} // namespace

int run_certs(int argc, char** argv) {
  if (argc >= 1 && is_help_flag(argv[0])) {
    fmt::print("{}", help_text(init_spec));
    return exit_ok;
  }
  if (argc < 1 || std::string_view{argv[0]} != "init") {
    fmt::print(stderr, "strom certs: expected 'init': usage: {}\n", init_spec.usage);
    return exit_usage;
  }
  auto parsed = parse_command(init_spec, "strom certs init", argc - 1, argv + 1);
  if (!parsed.args)
    return parsed.exit_status;
  const auto& args = *parsed.args;
  runtime::certificate_request request{args.positionals()[0], names_of(args, "nodes"),
                                       names_of(args, "clients")};
  for (const auto& [option, names] : {std::pair{"nodes", &request.nodes},
                                      std::pair{"clients", &request.clients}})
    for (const auto& name : *names)
      if (auto problem = runtime::certificate_name_problem(name); !problem.empty()) {
        fmt::print(stderr, "strom certs init: --{}: {}\n", option, problem);
        return exit_usage;
      }
  if (request.nodes.empty() && request.clients.empty()) {
    fmt::print(stderr, "strom certs init: give --nodes NAME,... (and --clients NAME,...)\n");
    return exit_usage;
  }
  if (auto made = runtime::init_certificates(request); !made) {
    fmt::print(stderr, "strom certs init: {}\n", made.err().message);
    return exit_failure;
  }
  fmt::print("strom certs init: wrote {0}/ca.pem and {0}/ca.key and the certificates of {1} "
             "node{2} and {3} client{4}\n",
             request.directory, request.nodes.size(), request.nodes.size() == 1 ? "" : "s",
             request.clients.size(), request.clients.size() == 1 ? "" : "s");
  return exit_ok;
}

} // namespace strom::cli
