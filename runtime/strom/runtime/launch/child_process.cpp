#include "strom/runtime/launch/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "strom/runtime/stop_signals.hpp"

extern char** environ;

namespace strom::runtime::launch {

namespace {

/// How often a wait for a child's end looks again.
constexpr auto reap_poll = std::chrono::milliseconds(20);

/// Exit status a child reports when exec failed (as a shell's "command not found").
constexpr int exec_failed_status = 127;

int status_of(int raw) {
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

} // namespace

result<child_process> child_process::start(const std::vector<std::string>& argv,
                                           child_output output) {
  std::vector<char*> words;
  for (const auto& word : argv)
    words.push_back(const_cast<char*>(word.c_str()));
  words.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  if (output == child_output::piped && ::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return error{fmt::format("cannot start {}: pipe: {}", argv[0], std::strerror(errno))};
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0)
    return error{fmt::format("cannot start {}: fork: {}", argv[0], std::strerror(errno))};
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec: the parent has threads.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent)  // the parent died before prctl took effect
      ::_exit(exec_failed_status);
    // Caught signals reset to default at exec; a blocked mask would not, so clear it.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(output == child_output::piped ? pipe_fds[1] : 2, 1);
    ::execvp(words[0], words.data());
    ::_exit(exec_failed_status);
  }
  ::setpgid(pid, pid);  // also here: a signal sent right after start must reach the group
  child_process child;
  child.pid_ = pid;
  child.name_ = argv[0];
  if (output == child_output::piped) {
    ::close(pipe_fds[1]);
    child.output_fd_ = pipe_fds[0];
  }
  return result<child_process>{std::move(child)};
}

child_process::child_process(child_process&& other) noexcept
    : pid_(other.pid_), output_fd_(other.output_fd_), name_(std::move(other.name_)),
      pending_(std::move(other.pending_)), status_(other.status_),
      forwarding_(other.forwarding_) {
  other.pid_ = -1;
  other.output_fd_ = -1;
}

child_process::~child_process() {
  if (pid_ > 0)
    stop(stop_grace);
  if (output_fd_ >= 0 && !forwarding_)
    ::close(output_fd_);
}

std::optional<std::string> child_process::read_line(std::chrono::steady_clock::time_point deadline) {
  while (true) {
    if (auto end = pending_.find('\n'); end != std::string::npos) {
      auto line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return line;
    }
    const auto now = std::chrono::steady_clock::now();
    if (output_fd_ < 0 || now >= deadline || stop_requested())
      return std::nullopt;
    const auto wait = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                               std::chrono::duration_cast<std::chrono::milliseconds>(signal_poll));
    pollfd ready{output_fd_, POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(wait.count())) <= 0)
      continue;
    char buffer[4096];
    const auto got = ::read(output_fd_, buffer, sizeof buffer);
    if (got <= 0)
      return std::nullopt;
    pending_.append(buffer, static_cast<std::size_t>(got));
  }
}

void child_process::forward_output() {
  if (output_fd_ < 0 || forwarding_)
    return;
  forwarding_ = true;
  if (!pending_.empty())
    fmt::print(stderr, "{}", pending_);
  // The thread owns the descriptor from here: it ends, and closes it, when the child's
  // output ends, which stop() guarantees.
  std::thread([fd = output_fd_] {
    char buffer[4096];
    for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;)
      if (::write(2, buffer, static_cast<std::size_t>(got)) < 0)
        break;
    ::close(fd);
  }).detach();
}

std::optional<int> child_process::poll() {
  if (!status_ && pid_ > 0) {
    int raw = 0;
    if (::waitpid(pid_, &raw, WNOHANG) == pid_)
      status_ = status_of(raw);
  }
  return status_;
}

int child_process::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0)
    return status_.value_or(exec_failed_status);
  if (!poll())
    ::kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!poll() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(reap_poll);
  // Whatever the group still holds goes too: the leader's end does not end its children.
  ::kill(-pid_, SIGKILL);
  if (!status_) {
    int raw = 0;
    ::waitpid(pid_, &raw, 0);
    status_ = status_of(raw);
  }
  pid_ = -1;
  return *status_;
}

} // namespace strom::runtime::launch
