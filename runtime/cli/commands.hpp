#pragma once
// The `strom` subcommands. Each takes the arguments after its name and returns the exit
// status: 0 on success, 1 when the work failed, 2 for a usage error.

namespace strom::cli {

int run_train(int argc, char** argv);
int run_eval(int argc, char** argv);
int run_frame(int argc, char** argv);

/// Exit statuses shared by every command.
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

} // namespace strom::cli
