#pragma once
// A process `strom launch` started and must not leave behind. Each runs in its own process
// group, so that one signal reaches it and everything it started (an ssh client's helpers, a
// shell), and so that Ctrl-C at the terminal reaches only `strom launch`, which first cancels
// the job and then stops its processes in order. Should `strom launch` itself be killed
// (SIGKILL), the kernel sends each child SIGTERM (PR_SET_PDEATHSIG).

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::runtime::launch {

/// How a child's standard output is wired.
enum class child_output {
  to_stderr,  ///< onto this process's stderr: a node's lines join the launch's log
  piped,      ///< into a pipe this process reads (read_line)
};

class child_process {
public:
  /// Starts `argv[0]` (an absolute path, or a name looked up in PATH) with `argv`; stdin is
  /// /dev/null. Errors name the program and why it could not start.
  static result<child_process> start(const std::vector<std::string>& argv, child_output output);

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&& other) = delete;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  /// Stops it (stop()) unless it ended already.
  ~child_process();

  /// The next line of a piped stdout (without its newline), waiting until `deadline`; nullopt
  /// on end of output, at the deadline, or when a stop signal arrived.
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline);
  /// Copies what remains of a piped stdout onto stderr in a thread of its own, so that the
  /// child never blocks on a full pipe.
  void forward_output();

  /// Its exit status once it ended (128 + the signal when a signal ended it), without waiting.
  std::optional<int> poll();
  /// SIGTERM to its process group, SIGKILL after `grace`; returns how it ended.
  int stop(std::chrono::milliseconds grace);

  pid_t pid() const noexcept { return pid_; }
  /// The program's name, for messages.
  const std::string& name() const noexcept { return name_; }

private:
  child_process() = default;

  pid_t pid_ = -1;
  int output_fd_ = -1;
  std::string name_;
  std::string pending_;  ///< read from the pipe, not yet returned as a line
  std::optional<int> status_;
  bool forwarding_ = false;
};

/// Time a stopped child gets to end cleanly before SIGKILL: a node leaves the scheduler and a
/// scheduler closes its ports in well under a second; ssh hangs up at once.
inline constexpr auto stop_grace = std::chrono::seconds(10);

} // namespace strom::runtime::launch
