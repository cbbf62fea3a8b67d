// strom: train, evaluate and inspect from the command line, and run a cluster of nodes.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "options/arguments.hpp"
#include "options/nearest_name.hpp"
#include "strom/actors/protocol/cluster.hpp"
#include "strom/log.hpp"

namespace {

using command_runner = int (*)(int, char**);

/// A command: what `strom --help` shows of it, and what runs it.
struct command_entry {
  std::string_view synopsis;  ///< its name and arguments, as the help lists them
  std::string_view summary;
  command_runner run;

  /// The command's name: the synopsis's first word.
  constexpr std::string_view name() const { return synopsis.substr(0, synopsis.find(' ')); }
};

constexpr std::array commands{
  command_entry{"train JOB", "train a job file (Cap'n Proto text, see examples/*.job); "
                                      "--resume PATH goes on from a checkpoint",
                strom::cli::run_train},
  command_entry{"eval CHECKPOINT",
                "evaluate a saved checkpoint on its job's test set (or --data FILE)",
                strom::cli::run_eval},
  command_entry{"predict CKPT",
                "predict the classes of samples (--data FILE) with a saved checkpoint",
                strom::cli::run_predict},
  command_entry{"export CKPT",
                "write a saved checkpoint's network as an ONNX model (--onnx FILE)",
                strom::cli::run_export},
  command_entry{"frame inspect F", "print an update frame's header and payload "
                                            "statistics",
                strom::cli::run_frame},
  command_entry{"node", "run a cluster node: --scheduler --listen HOST:PORT, or --join "
                                "HOST:PORT",
                strom::cli::run_node},
  command_entry{"submit JOB", "submit a job file to a cluster's scheduler (--to "
                                        "HOST:PORT) and follow it",
                strom::cli::run_submit},
  command_entry{"attach JOB_ID", "follow a job submitted earlier (--to HOST:PORT) to "
                                           "its end",
                strom::cli::run_attach},
  command_entry{"launch JOB", "start a scheduler and nodes (--hosts FILE, or under "
                                        "srun), submit JOB, stop them",
                strom::cli::run_launch},
  command_entry{"status", "list a scheduler's nodes and jobs (--to HOST:PORT)",
                strom::cli::run_status},
  command_entry{"cancel JOB_ID", "cancel a running job (--to HOST:PORT)",
                strom::cli::run_cancel},
  command_entry{"certs init DIR", "make a cluster's CA and certificates for "
                                           "--tls-ca/--tls-cert/--tls-key",
                strom::cli::run_certs},
  command_entry{"sim SCENARIO", "run a simulation scenario (model mode); 'sim calibrate "
                                       "JOB' measures costs",
                strom::cli::run_sim},
  command_entry{"report METRICS", "write a run's HTML report (-o FILE) from its "
                                            "metrics JSON (and --timeline)",
                strom::cli::run_report},
};

/// `strom --help`: the commands and the global options.
std::string top_help() {
  std::string text = "usage: strom [--log-level LEVEL] COMMAND [ARGS]\n\n"
                     "strom, a distributed deep-learning training runtime.\n\ncommands:\n";
  for (const auto& c : commands)
    text += strom::cli::help_entry("  " + std::string{c.synopsis}, 19, std::string{c.summary});
  text += "  help [COMMAND]   this text, or a command's options (as 'strom COMMAND --help')\n"
          "\nglobal options (before or after the command):\n"
          "  --log-level LEVEL  trace, debug, info (default), warning, error or off\n"
          "  --version          strom's version and wire protocol\n"
          "  --help             this text\n";
  return text;
}

const command_entry* find_command(std::string_view name) {
  for (const auto& c : commands)
    if (c.name() == name)
      return &c;
  return nullptr;
}

/// The command closest to a misspelt `name`, when one is within two edits.
std::optional<std::string> closest_command(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& c : commands)
    names.emplace_back(c.name());
  return strom::cli::nearest_name(name, names);
}

/// Takes `--log-level LEVEL` out of the arguments wherever it stands; false (after saying
/// why) when its value is missing or unknown.
bool take_log_level(std::vector<char*>& args) {
  using namespace strom;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (std::strcmp(args[i], "--log-level") != 0)
      continue;
    log::level lvl{};
    if (i + 1 >= args.size() || !log::parse_level(args[i + 1], lvl)) {
      fmt::print(stderr, "strom: --log-level needs one of trace, debug, info, warning, error, "
                         "off\n");
      return false;
    }
    log::set_threshold(lvl);
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
               args.begin() + static_cast<std::ptrdiff_t>(i + 2));
    --i;
  }
  return true;
}

/// Runs the command that argv names.
int dispatch(int argc, char** argv) {
  using namespace strom;
  std::vector<char*> args(argv, argv + argc);
  if (!take_log_level(args))
    return cli::exit_usage;
  if (args.size() < 2) {
    fmt::print(stderr, "{}", top_help());
    return cli::exit_usage;
  }
  const std::string_view command = args[1];
  if (command == "--help" || command == "-h" || (command == "help" && args.size() == 2)) {
    fmt::print("{}", top_help());
    return cli::exit_ok;
  }
  if (command == "--version" || command == "version") {
    fmt::print("strom {} (wire protocol {})\n", STROM_VERSION, actors::protocol_version);
    return cli::exit_ok;
  }
  // `strom help COMMAND` is `strom COMMAND --help`.
  const bool help = command == "help";
  const std::string_view name = help ? std::string_view{args[2]} : command;
  const auto* found = find_command(name);
  if (!found) {
    const auto near = closest_command(name);
    fmt::print(stderr, "strom: unknown command '{}'{}; 'strom --help' lists the commands\n",
               name, near ? fmt::format(" (did you mean '{}'?)", *near) : "");
    return cli::exit_usage;
  }
  std::vector<char*> rest(args.begin() + (help ? 3 : 2), args.end());
  static char help_flag[] = "--help";
  if (help)
    rest = {help_flag};
  rest.push_back(nullptr);
  return found->run(static_cast<int>(rest.size() - 1), rest.data());
}

} // namespace

int main(int argc, char** argv) {
  // Job files are checked and their memory estimated before anything large is allocated;
  // should memory run out anyway, say so instead of aborting (exit 134, no message).
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "strom: out of memory (std::bad_alloc): the job needs more memory than "
                       "this machine could give it\n");
  } catch (const std::exception& e) {
    fmt::print(stderr, "strom: stopped by an unexpected error: {}\n", e.what());
  }
  return strom::cli::exit_failure;
}
