#pragma once
// The `strom` subcommands. Each takes the arguments after its name and returns the exit
// status: 0 on success, 1 when the work failed, 2 for a usage error.

#include <cstdint>

namespace strom::cli {

int run_train(int argc, char** argv);
int run_eval(int argc, char** argv);
int run_predict(int argc, char** argv);
int run_export(int argc, char** argv);
int run_frame(int argc, char** argv);
int run_node(int argc, char** argv);
int run_submit(int argc, char** argv);
int run_attach(int argc, char** argv);
int run_status(int argc, char** argv);
int run_cancel(int argc, char** argv);
int run_certs(int argc, char** argv);
int run_sim(int argc, char** argv);
int run_launch(int argc, char** argv);
int run_report(int argc, char** argv);

/// Exit statuses shared by every command.
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;
/// A command ended by SIGINT or SIGTERM exits with 128 + the signal's number, as a shell
/// reports a process the signal killed (130 for Ctrl-C).
constexpr int exit_signal_base = 128;

/// The exit status of a command that failed: exit_failure, or exit_signal_base + the signal
/// when SIGINT or SIGTERM ended it (runtime/stop_signals.hpp).
int failure_status();

/// Largest epoch count accepted on the command line; more is surely a typo.
constexpr std::uint64_t max_epochs = 1'000'000;
/// Workers in one process; each holds a model replica, so far more than cores only wastes memory.
constexpr std::uint64_t max_workers = 1024;

} // namespace strom::cli
