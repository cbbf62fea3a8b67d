#pragma once
// Real `strom` processes for the cluster tests: a child that is always killed and reaped at
// scope exit, bounded waits, a scheduler plus worker nodes on 127.0.0.1 with a free port.

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/scratch_dir.hpp"

extern char** environ;

namespace strom::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// The strom program under test.
inline const std::string strom_program = std::string{STROM_BINARY_DIR} + "/runtime/strom";

/// How often waits look at a child or its output.
inline constexpr auto poll_interval = 20ms;

inline std::string read_text(const fs::path& path) {
  std::ifstream in{path};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// One `strom` child process, stdout and stderr in files; killed and reaped at scope exit.
class child {
public:
  /// Starts `strom ARGS...` in `dir` (where the checkpoints it saves by default go); `label`
  /// names its output files there.
  child(const std::vector<std::string>& args, const fs::path& dir, const std::string& label)
      : out_(dir / (label + ".out")), err_(dir / (label + ".err")), label_(label) {
    std::vector<std::string> words{strom_program};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words)
      argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
    const int failed = posix_spawn(&pid_, strom_program.c_str(), &actions, nullptr, argv.data(),
                                   environ);
    posix_spawn_file_actions_destroy(&actions);
    BOOST_REQUIRE_MESSAGE(failed == 0, "cannot start " << strom_program << ": " << failed);
  }
  ~child() {
    if (status_)
      return;
    ::kill(pid_, SIGKILL);
    int raw = 0;
    ::waitpid(pid_, &raw, 0);
  }
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  /// The exit status once it ended within `limit` (-1 for a signal), else nullopt.
  std::optional<int> wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!status_) {
      int raw = 0;
      if (::waitpid(pid_, &raw, WNOHANG) == pid_)
        status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, signal_ = WIFSIGNALED(raw) ? WTERMSIG(raw) : 0;
      else if (std::chrono::steady_clock::now() >= deadline)
        break;
      else
        std::this_thread::sleep_for(poll_interval);
    }
    return status_;
  }

  /// Waits until stdout holds `text`; false after `limit` or when the child ended first.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds limit) {
    return wait_for(out_, text, limit);
  }

  /// Waits until stderr (the log) holds `text`; false after `limit` or when the child ended.
  bool wait_for_log(const std::string& text, std::chrono::milliseconds limit) {
    return wait_for(err_, text, limit);
  }

  void signal(int number) { ::kill(pid_, number); }
  pid_t pid() const noexcept { return pid_; }
  std::string out() const { return read_text(out_); }
  std::string err() const { return read_text(err_); }
  /// Whether it still runs or how it ended, and both outputs, for failure messages.
  std::string transcript() {
    wait(0ms);
    const auto state = !status_ ? std::string{"running"}
                       : signal_ ? "killed by signal " + std::to_string(signal_)
                                 : "exited with status " + std::to_string(*status_);
    return label_ + " (" + state + ") stdout:\n" + out() + "\n" + label_ + " stderr:\n" + err();
  }

private:
  bool wait_for(const fs::path& file, const std::string& text, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (contains(read_text(file), text))
        return true;
      if (wait(0ms))
        return contains(read_text(file), text);
      std::this_thread::sleep_for(poll_interval);
    }
    return false;
  }

  fs::path out_;
  fs::path err_;
  std::string label_;
  pid_t pid_ = -1;
  std::optional<int> status_;
  int signal_ = 0;  ///< the signal that ended it, 0 when it exited or runs
};

/// The outcome of a strom command run to its end.
struct command_result {
  int status = -1;
  std::string out;
  std::string err;
};

/// Runs `strom ARGS...` to its end; fails the test if it takes longer than `limit`.
inline command_result run_strom(const std::vector<std::string>& args, const fs::path& dir,
                                const std::string& label, std::chrono::milliseconds limit) {
  child command{args, dir, label};
  auto status = command.wait(limit);
  BOOST_REQUIRE_MESSAGE(status.has_value(), label << " did not end within " << limit.count()
                                                  << " ms\n" << command.transcript());
  return {*status, command.out(), command.err()};
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
inline std::uint16_t closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  BOOST_REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

/// A JSON number field of the flat metrics object.
inline double json_number(const std::string& json, const std::string& key) {
  auto at = json.find("\"" + key + "\":");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, key << " missing in " << json);
  return std::stod(json.substr(at + key.size() + 3));
}

/// The port of HOST:PORT.
inline std::uint16_t port_of(const std::string& address) {
  return static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
}

/// A size field of /proc/PID/status in KiB ("VmRSS", "VmHWM"); -1 when it cannot be read.
inline long status_kib(pid_t pid, const std::string& field) {
  std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0)
      return std::stol(line.substr(field.size() + 1));
  return -1;
}

/// Whether process `pid` holds an established TCP connection to `port` (on any address):
/// its socket descriptors matched against the kernel's table of IPv4 connections.
inline bool connected_to_port(pid_t pid, std::uint16_t port) {
  const fs::path proc = "/proc/" + std::to_string(pid);
  std::vector<std::string> inodes;  // of the process's sockets, as "socket:[INODE]" names them
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator(proc / "fd", ec)) {
    const auto target = fs::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0)
      inodes.push_back(target.substr(8, target.size() - 9));
  }
  std::ifstream table{proc / "net" / "tcp"};
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields{line};
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
      timeout >> inode;
    const auto remote_port = std::stoul(remote.substr(remote.find(':') + 1), nullptr, 16);
    if (state == "01" && remote_port == port
        && std::find(inodes.begin(), inodes.end(), inode) != inodes.end())
      return true;
  }
  return false;
}

/// Time for a daemon to start listening or to join.
inline constexpr auto startup_limit = 20'000ms;

/// --tls-ca, --tls-cert and --tls-key for `name`'s files in a `strom certs init` directory.
inline std::vector<std::string> tls_options(const fs::path& certificates, const std::string& name) {
  return {"--tls-ca",  (certificates / "ca.pem").string(),
          "--tls-cert", (certificates / (name + ".pem")).string(),
          "--tls-key",  (certificates / (name + ".key")).string()};
}

/// The client name whose certificate a TLS cluster's commands use.
inline const std::string tls_client_name = "alice";

/// A scheduler process and worker processes (one trainer each) on 127.0.0.1.
class local_cluster {
public:
  /// Starts the scheduler (with `scheduler_options` added to its command line) and `workers`
  /// nodes named w1, w2, ... and waits until they joined. With `certificates` (a `strom certs
  /// init` directory holding scheduler, the workers' names and alice) every process speaks
  /// TLS: the scheduler and workers with their own node certificates, commands as alice.
  explicit local_cluster(int workers, const std::vector<std::string>& scheduler_options = {},
                         std::optional<fs::path> certificates = std::nullopt)
      : scheduler_options_(scheduler_options), certificates_(std::move(certificates)) {
    start_scheduler("127.0.0.1:0", "scheduler");
    for (int i = 1; i <= workers; ++i)
      add_worker(std::string{"w"}.append(std::to_string(i)));
  }

  /// Starts the scheduler again at its address with the same options (the test killed it);
  /// `label` names its output files.
  child& restart_scheduler(const std::string& label) {
    start_scheduler(address_, label);
    return *scheduler_;
  }

  /// Starts a worker named `name` and waits until it joined.
  child& add_worker(const std::string& name) {
    auto& worker = start_worker(name, name);
    BOOST_REQUIRE_MESSAGE(worker.wait_for_output("joined", startup_limit), worker.transcript());
    return worker;
  }

  /// Starts a worker named `name` without waiting; `label` names its output files, `extra`
  /// goes on its command line (`--role server` makes it a server node).
  child& start_worker(const std::string& name, const std::string& label,
                      const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"node", "--join", address_, "--workers", "1", "--name", name};
    args.insert(args.end(), extra.begin(), extra.end());
    workers_.push_back(std::make_unique<child>(with_tls(std::move(args), name), dir_.path(), label));
    return *workers_.back();
  }

  /// Starts a server node (parameter shards of kvstore jobs) named `name` and waits until it
  /// joined; it counts among worker(i) in start order.
  child& add_server(const std::string& name) {
    auto& server = start_worker(name, name, {"--role", "server"});
    BOOST_REQUIRE_MESSAGE(server.wait_for_output("joined", startup_limit), server.transcript());
    return server;
  }

  /// Runs `strom ARGS... --to ADDRESS` to its end within `limit`.
  command_result command(std::vector<std::string> args, const std::string& label,
                         std::chrono::milliseconds limit) {
    args.insert(args.end(), {"--to", address_});
    return run_strom(with_tls(std::move(args), tls_client_name), dir_.path(), label, limit);
  }

  /// Starts `strom ARGS... --to ADDRESS` in the background.
  std::unique_ptr<child> start(std::vector<std::string> args, const std::string& label) {
    args.insert(args.end(), {"--to", address_});
    return std::make_unique<child>(with_tls(std::move(args), tls_client_name), dir_.path(),
                                   label);
  }

  const scratch& dir() const noexcept { return dir_; }
  /// The scheduler's HOST:PORT.
  const std::string& address() const noexcept { return address_; }
  child& scheduler() { return *scheduler_; }
  child& worker(std::size_t index) { return *workers_.at(index); }

private:
  /// `args` with `name`'s TLS options when the cluster speaks TLS.
  std::vector<std::string> with_tls(std::vector<std::string> args, const std::string& name) const {
    if (certificates_) {
      const auto tls = tls_options(*certificates_, name);
      args.insert(args.end(), tls.begin(), tls.end());
    }
    return args;
  }

  /// Starts `strom node --scheduler --listen LISTEN` and waits until it listens.
  void start_scheduler(const std::string& listen, const std::string& label) {
    auto args = with_tls({"node", "--scheduler", "--listen", listen}, "scheduler");
    args.insert(args.end(), scheduler_options_.begin(), scheduler_options_.end());
    if (scheduler_)
      retired_.push_back(std::move(scheduler_));
    scheduler_ = std::make_unique<child>(args, dir_.path(), label);
    const std::string marker = "listening on ";
    BOOST_REQUIRE_MESSAGE(scheduler_->wait_for_output(marker, startup_limit),
                          scheduler_->transcript());
    const auto out = scheduler_->out();
    const auto start = out.find(marker) + marker.size();
    address_ = out.substr(start, out.find(' ', start) - start);
    BOOST_REQUIRE_MESSAGE(address_.rfind("127.0.0.1:", 0) == 0 && address_ != "127.0.0.1:0", out);
  }

  scratch dir_;
  std::vector<std::string> scheduler_options_;
  std::optional<fs::path> certificates_;
  std::unique_ptr<child> scheduler_;
  std::vector<std::unique_ptr<child>> retired_;  ///< schedulers the test killed
  std::vector<std::unique_ptr<child>> workers_;
  std::string address_;
};

/// Calls `probe` every 100 ms until it returns true or `limit` passed; returns the last answer.
template <class Probe>
bool eventually(Probe probe, std::chrono::milliseconds limit) {
  for (auto deadline = std::chrono::steady_clock::now() + limit;;) {
    if (probe())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(100ms);
  }
}

/// The example MLP job every cluster test trains.
inline const std::string fashion_mlp_job =
  std::string{STROM_SOURCE_DIR} + "/examples/fashion_mlp.job";

} // namespace strom::test
