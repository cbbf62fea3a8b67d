#include <fmt/format.h>

#include <string_view>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "strom/runtime/frame_inspect.hpp"

namespace strom::cli {

namespace {

const command_spec inspect_spec{
  "strom frame inspect FILE",
  "Prints an update frame's header and payload statistics (encoding, element count,\n"
  "density, threshold, byte sizes), or refuses a malformed frame with exit status 1.",
  {},
  1,
};

} // namespace

int run_frame(int argc, char** argv) {
  if (argc >= 1 && is_help_flag(argv[0])) {
    fmt::print("{}", help_text(inspect_spec));
    return exit_ok;
  }
  if (argc < 1 || std::string_view{argv[0]} != "inspect") {
    fmt::print(stderr, "strom frame: expected 'inspect': usage: {}\n", inspect_spec.usage);
    return exit_usage;
  }
  auto parsed = parse_command(inspect_spec, "strom frame inspect", argc - 1, argv + 1);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  return runtime::inspect_frame_file(args->positionals()[0], stdout, stderr);
}

} // namespace strom::cli
