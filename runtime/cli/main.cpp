// strom: train, evaluate and inspect from the command line, and run a cluster of nodes.

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <new>
#include <string_view>

#include "commands.hpp"
#include "strom/log.hpp"

namespace {

constexpr std::string_view top_help = R"(usage: strom [--log-level LEVEL] COMMAND [ARGS]

strom, a distributed deep-learning training runtime.

commands:
  train JOB        train a job file (Cap'n Proto text, see examples/*.job)
  eval CHECKPOINT  evaluate a saved checkpoint on its job's test set (or --data FILE)
  predict CKPT     predict the classes of samples (--data FILE) with a saved checkpoint
  export CKPT      write a saved checkpoint's network as an ONNX model (--onnx FILE)
  frame inspect F  print an update frame's header and payload statistics
  node             run a cluster node: --scheduler --listen HOST:PORT, or --join HOST:PORT
  submit JOB       submit a job file to a cluster's scheduler (--to HOST:PORT) and follow it
  attach JOB_ID    follow a job submitted earlier (--to HOST:PORT) to its end
  launch JOB       start a scheduler and nodes (--hosts FILE, or under srun), submit JOB, stop them
  status           list a scheduler's nodes and jobs (--to HOST:PORT)
  cancel JOB_ID    cancel a running job (--to HOST:PORT)
  certs init DIR   make a cluster's CA and certificates for --tls-ca/--tls-cert/--tls-key
  sim SCENARIO     run a simulation scenario (model mode); 'sim calibrate JOB' measures costs
  report METRICS   write a run's HTML report (-o FILE) from its metrics JSON (and --timeline)

global options:
  --log-level LEVEL  trace, debug, info (default), warning, error or off
  --help             this text; 'strom COMMAND --help' describes a command's options
)";

/// Runs the command that argv names.
int dispatch(int argc, char** argv) {
  using namespace strom;
  int first = 1;
  if (first < argc && std::strcmp(argv[first], "--log-level") == 0) {
    log::level lvl{};
    if (first + 1 >= argc || !log::parse_level(argv[first + 1], lvl)) {
      fmt::print(stderr, "strom: --log-level needs one of trace, debug, info, warning, error, off\n");
      return cli::exit_usage;
    }
    log::set_threshold(lvl);
    first += 2;
  }
  if (first >= argc || std::strcmp(argv[first], "--help") == 0 || std::strcmp(argv[first], "-h") == 0) {
    fmt::print(first >= argc ? stderr : stdout, "{}", top_help);
    return first >= argc ? cli::exit_usage : cli::exit_ok;
  }
  const std::string_view command = argv[first];
  const int rest = argc - first - 1;
  char** rest_argv = argv + first + 1;
  if (command == "train")
    return cli::run_train(rest, rest_argv);
  if (command == "eval")
    return cli::run_eval(rest, rest_argv);
  if (command == "predict")
    return cli::run_predict(rest, rest_argv);
  if (command == "export")
    return cli::run_export(rest, rest_argv);
  if (command == "frame")
    return cli::run_frame(rest, rest_argv);
  if (command == "node")
    return cli::run_node(rest, rest_argv);
  if (command == "submit")
    return cli::run_submit(rest, rest_argv);
  if (command == "attach")
    return cli::run_attach(rest, rest_argv);
  if (command == "status")
    return cli::run_status(rest, rest_argv);
  if (command == "cancel")
    return cli::run_cancel(rest, rest_argv);
  if (command == "certs")
    return cli::run_certs(rest, rest_argv);
  if (command == "sim")
    return cli::run_sim(rest, rest_argv);
  if (command == "launch")
    return cli::run_launch(rest, rest_argv);
  if (command == "report")
    return cli::run_report(rest, rest_argv);
  fmt::print(stderr, "strom: unknown command '{}'\n\n{}", command, top_help);
  return cli::exit_usage;
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
