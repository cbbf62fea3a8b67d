#define BOOST_TEST_MODULE process_launch_processes
#include <boost/test/unit_test.hpp>

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "cluster_processes.hpp"

// `strom launch`: a scheduler and nodes started from a hosts file (locally, over ssh to an sshd
// the test runs on loopback) or from Slurm's variables, the job trained, and nothing left.

using namespace strom::test;

namespace {

/// The launch of a 3-epoch MLP: the cluster's start (nodes measure their speed) and training.
constexpr auto launch_limit = 120'000ms;
/// Epochs of the accuracy case: those of the cluster tests' 3-epoch case
/// (test_cluster_processes.cpp), with its bar.
constexpr const char* accuracy_epochs = "3";
constexpr double three_epoch_accuracy_bar = 0.80;
/// After SIGINT: cancel the job, stop nodes and the scheduler (each gets stop_grace, 10 s).
constexpr auto interrupt_limit = 30'000ms;
/// How often the test samples which processes a launch started.
constexpr auto sample_interval = 100ms;

/// The parent pid and state letter of /proc/PID/stat; nullopt once it is gone.
std::optional<std::pair<pid_t, char>> stat_of(pid_t pid) {
  std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text;
  if (!std::getline(stat, text))
    return std::nullopt;
  // "PID (COMM) STATE PPID ...": COMM may hold spaces, so read after its closing parenthesis.
  std::istringstream rest{text.substr(text.rfind(')') + 2)};
  char state = 0;
  pid_t parent = 0;
  rest >> state >> parent;
  return std::make_pair(parent, state);
}

/// Whether `pid` runs (a zombie waiting for its reaper does not).
bool alive(pid_t pid) {
  auto stat = stat_of(pid);
  return stat && stat->second != 'Z';
}

std::vector<pid_t> all_pids() {
  std::vector<pid_t> pids;
  DIR* proc = ::opendir("/proc");
  while (auto* entry = proc ? ::readdir(proc) : nullptr)
    if (const pid_t pid = std::atoi(entry->d_name); pid > 0)
      pids.push_back(pid);
  if (proc)
    ::closedir(proc);
  return pids;
}

/// Adds every descendant of `root` to `found`.
void add_descendants(pid_t root, std::set<pid_t>& found) {
  std::multimap<pid_t, pid_t> children;
  for (pid_t pid : all_pids())
    if (auto stat = stat_of(pid))
      children.emplace(stat->first, pid);
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t parent = todo.back();
    todo.pop_back();
    for (auto [it, end] = children.equal_range(parent); it != end; ++it)
      if (found.insert(it->second).second)
        todo.push_back(it->second);
  }
}

/// Running processes whose command line holds `text`, this test excepted.
std::vector<pid_t> processes_naming(const std::string& text) {
  std::vector<pid_t> found;
  for (pid_t pid : all_pids()) {
    std::ifstream in{"/proc/" + std::to_string(pid) + "/cmdline"};
    std::string line{std::istreambuf_iterator<char>(in), {}};
    std::replace(line.begin(), line.end(), '\0', ' ');
    if (pid != ::getpid() && contains(line, text) && alive(pid))
      found.push_back(pid);
  }
  return found;
}

/// Waits up to `limit` for `launch` to end, noting every process it started meanwhile.
std::optional<int> wait_noting_descendants(child& launch, std::chrono::milliseconds limit,
                                           std::set<pid_t>& started) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    add_descendants(launch.pid(), started);
    if (auto status = launch.wait(sample_interval))
      return status;
  }
  return std::nullopt;
}

/// The scheduler's port, from the line launch passes on: "listening on HOST:PORT (...)".
std::string scheduler_port_in(const std::string& log) {
  const std::string marker = "listening on ";
  const auto at = log.find(marker);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, log);
  const auto address = log.substr(at + marker.size(), log.find(' ', at + marker.size()) - at -
                                                        marker.size());
  return std::to_string(port_of(address));
}

/// Checks that none of `started` runs and that no process joins the scheduler's port.
void check_nothing_left(const std::set<pid_t>& started, const std::string& port,
                        const std::string& transcript) {
  BOOST_TEST(started.size() >= 3u, "launch started the scheduler and two nodes\n" << transcript);
  for (pid_t pid : started)
    BOOST_TEST(!alive(pid), "process " << pid << " outlived strom launch\n" << transcript);
  BOOST_TEST(processes_naming(":" + port).empty(),
             "a process still names the scheduler's port " << port);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream{path} << text;
}

/// Runs a program other than strom to its end; its exit status (-1 for a signal).
int run_program(const std::vector<std::string>& words, const fs::path& log) {
  std::vector<char*> argv;
  for (const auto& w : words)
    argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int failed = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  BOOST_REQUIRE_MESSAGE(failed == 0, "cannot start " << words[0]);
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

/// An sshd on 127.0.0.1 that admits the current user with a key made for it, all in `dir`;
/// stopped at scope exit (the scratch folder then goes with its keys).
class loopback_sshd {
public:
  static constexpr const char* program = "/usr/sbin/sshd";

  explicit loopback_sshd(const fs::path& dir) : dir_(dir), port_(closed_port()) {
    const auto log = dir / "ssh-keygen.log";
    for (const char* key : {"host_key", "client_key"})
      BOOST_REQUIRE(run_program({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                                 (dir / key).string()}, log) == 0);
    fs::copy_file(dir / "client_key.pub", dir / "authorized_keys");
    // sshd refuses to start without its privilege-separation folder.
    std::error_code ignored;
    fs::create_directories("/run/sshd", ignored);
    const std::vector<std::string> words{
      program, "-D", "-e", "-f", "/dev/null", "-p", std::to_string(port_),
      "-o", "ListenAddress=127.0.0.1",
      "-o", "HostKey=" + (dir / "host_key").string(),
      "-o", "AuthorizedKeysFile=" + (dir / "authorized_keys").string(),
      "-o", "PermitRootLogin=prohibit-password",
      "-o", "PasswordAuthentication=no",
      "-o", "StrictModes=no",  // the scratch folder lies in world-writable /tmp
      "-o", "UsePAM=no",
      "-o", "PidFile=" + (dir / "sshd.pid").string()};
    std::vector<char*> argv;
    for (const auto& w : words)
      argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const auto log_path = (dir / "sshd.log").string();
    posix_spawn_file_actions_addopen(&actions, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    const int failed = posix_spawn(&pid_, program, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    BOOST_REQUIRE_MESSAGE(failed == 0, "cannot start " << program);
    const bool listening = eventually(
      [&] {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = htons(port_);
        const bool open = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
        ::close(fd);
        return open;
      },
      startup_limit);
    BOOST_REQUIRE_MESSAGE(listening, "sshd did not listen:\n" << read_text(dir / "sshd.log"));
    // No questions about the unknown host key, no known_hosts file touched.
    write_text(dir / "ssh_config", "Host *\n  StrictHostKeyChecking no\n"
                                   "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n");
  }
  ~loopback_sshd() {
    ::kill(pid_, SIGTERM);
    int raw = 0;
    ::waitpid(pid_, &raw, 0);
  }
  loopback_sshd(const loopback_sshd&) = delete;
  loopback_sshd& operator=(const loopback_sshd&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  fs::path client_key() const { return dir_ / "client_key"; }
  fs::path config() const { return dir_ / "ssh_config"; }
  std::string log() const { return read_text(dir_ / "sshd.log"); }

private:
  fs::path dir_;
  std::uint16_t port_;
  pid_t pid_ = -1;
};

/// Sets this process's SLURM_* variables (children inherit them), unsetting them at scope exit.
struct slurm_variables {
  slurm_variables(const char* nodelist, const char* ntasks) {
    ::setenv("SLURM_NODELIST", nodelist, 1);
    ::setenv("SLURM_NTASKS", ntasks, 1);
    // localhost may resolve to ::1 first, where the IPv4 scheduler does not listen.
    ::setenv("STROM_LAUNCH_SCHEDULER_HOST", "127.0.0.1", 1);
  }
  void rank(const char* procid) { ::setenv("SLURM_PROCID", procid, 1); }
  ~slurm_variables() {
    for (const char* name :
         {"SLURM_NODELIST", "SLURM_NTASKS", "SLURM_PROCID", "STROM_LAUNCH_SCHEDULER_HOST"})
      ::unsetenv(name);
  }
};

/// Checks a finished 3-epoch launch: status 0 and the metrics at the 3-epoch bar.
void check_trained(child& launch, const std::optional<int>& status, const fs::path& metrics) {
  BOOST_REQUIRE_MESSAGE(status.has_value(), "launch did not end\n" << launch.transcript());
  BOOST_REQUIRE_MESSAGE(*status == 0, launch.transcript());
  BOOST_TEST(contains(launch.out(), "test accuracy"), launch.out());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "nodes") == 2.0, json);
  BOOST_TEST(json_number(json, "epochs") == std::stod(accuracy_epochs), json);
  BOOST_TEST(json_number(json, "test_accuracy") >= three_epoch_accuracy_bar, json);
}

/// What a finished launch left: its metrics JSON and everything its processes said.
struct launched {
  std::string metrics;
  std::string transcript;
};

/// Runs `strom launch ARGS... MLP --epochs 1 --metrics-out FILE` in `dir` to its end and checks
/// that it succeeded and left no process behind.
launched launch_one_epoch(const scratch& dir, std::vector<std::string> args) {
  const auto metrics = dir.path() / "metrics.json";
  args.insert(args.begin(), "launch");
  args.insert(args.end(), {fashion_mlp_job, "--epochs", "1", "--metrics-out", metrics.string()});
  child launch{args, dir.path(), "launch"};
  std::set<pid_t> started;
  const auto status = wait_noting_descendants(launch, launch_limit, started);
  BOOST_REQUIRE_MESSAGE(status.has_value(), "launch did not end\n" << launch.transcript());
  BOOST_REQUIRE_MESSAGE(*status == 0, launch.transcript());
  check_nothing_left(started, scheduler_port_in(launch.err()), launch.transcript());
  return {read_text(metrics), launch.transcript()};
}

/// The folder `strom certs init` made in `dir` with node certificates for `nodes` ("a,b").
fs::path certificates_in(const scratch& dir, const std::string& nodes) {
  const auto certs = dir.path() / "certs";
  auto made = run_strom({"certs", "init", certs.string(), "--nodes", nodes}, dir.path(), "certs",
                        startup_limit);
  BOOST_REQUIRE_MESSAGE(made.status == 0, made.err);
  return certs;
}

} // namespace

BOOST_AUTO_TEST_CASE(two_localhost_entries_train_to_the_bar_and_leave_no_process_behind) {
  scratch dir;
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "# two local nodes\nlocalhost workers=1\n127.0.0.1 workers=1\n");
  const auto metrics = dir.path() / "metrics.json";
  child launch{{"launch", "--hosts", hosts.string(), fashion_mlp_job, "--epochs", accuracy_epochs,
                "--metrics-out", metrics.string()},
               dir.path(), "launch"};
  std::set<pid_t> started;
  const auto status = wait_noting_descendants(launch, launch_limit, started);
  check_trained(launch, status, metrics);
  check_nothing_left(started, scheduler_port_in(launch.err()), launch.transcript());
}

BOOST_AUTO_TEST_CASE(sigint_during_training_cancels_the_job_and_leaves_no_process_behind) {
  scratch dir;
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "localhost workers=1\nlocalhost workers=1\n");
  child launch{{"launch", "--hosts", hosts.string(), fashion_mlp_job, "--epochs", "20"},
               dir.path(), "launch"};
  BOOST_REQUIRE_MESSAGE(launch.wait_for_log("epoch 1/20 done", launch_limit), launch.transcript());
  std::set<pid_t> started;
  add_descendants(launch.pid(), started);
  launch.signal(SIGINT);
  const auto status = wait_noting_descendants(launch, interrupt_limit, started);
  BOOST_REQUIRE_MESSAGE(status.has_value(), "launch did not end after SIGINT\n"
                                              << launch.transcript());
  BOOST_TEST(*status == 128 + SIGINT, launch.transcript());
  BOOST_TEST(contains(launch.err(), "cancelled job"), launch.err());
  check_nothing_left(started, scheduler_port_in(launch.err()), launch.transcript());
}

BOOST_AUTO_TEST_CASE(a_node_over_ssh_and_a_local_node_train_to_the_end) {
  if (!fs::exists(loopback_sshd::program)) {
    BOOST_TEST_MESSAGE("skipped: " << loopback_sshd::program
                                   << " is not installed (Debian: openssh-server)");
    return;
  }
  scratch dir;
  loopback_sshd sshd{dir.path()};
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "127.0.0.1:" + std::to_string(sshd.port()) +
                      " workers=1   # over ssh\nlocalhost workers=1\n");
  const auto metrics = dir.path() / "metrics.json";
  child launch{{"launch", "--hosts", hosts.string(), "--ssh-key", sshd.client_key().string(),
                "--ssh-config", sshd.config().string(), "--advertise", "127.0.0.1",
                fashion_mlp_job, "--epochs", accuracy_epochs, "--metrics-out", metrics.string()},
               dir.path(), "launch"};
  std::set<pid_t> started;
  const auto status = wait_noting_descendants(launch, launch_limit, started);
  check_trained(launch, status, metrics);
  BOOST_TEST(contains(sshd.log(), "Accepted publickey"), "no node came over ssh\n" << sshd.log());
  // The remote node is sshd's descendant, not launch's: look for it by the port it joined.
  const auto port = scheduler_port_in(launch.err());
  BOOST_TEST(eventually([&] { return processes_naming(":" + port).empty(); }, 5'000ms),
             "the node started over ssh outlived strom launch\n" << sshd.log());
  check_nothing_left(started, port, launch.transcript());
}

BOOST_AUTO_TEST_CASE(slurm_tasks_train_without_a_hosts_file) {
  scratch dir;
  const auto port = std::to_string(closed_port());
  const auto metrics = dir.path() / "metrics.json";
  slurm_variables slurm{"localhost,localhost", "2"};
  // Task 1 first: it waits for the scheduler that task 0 starts.
  slurm.rank("1");
  child follower{{"launch", "--port", port, "--workers", "1", fashion_mlp_job}, dir.path(),
                 "task1"};
  slurm.rank("0");
  child first{{"launch", "--port", port, "--workers", "1", fashion_mlp_job, "--epochs",
               accuracy_epochs, "--metrics-out", metrics.string()},
              dir.path(), "task0"};
  std::set<pid_t> started;
  const auto status = wait_noting_descendants(first, launch_limit, started);
  check_trained(first, status, metrics);
  const auto follower_status = follower.wait(interrupt_limit);
  BOOST_REQUIRE_MESSAGE(follower_status.has_value(), follower.transcript());
  BOOST_TEST(*follower_status == 0, follower.transcript());
  BOOST_TEST(processes_naming(":" + port).empty(), "a node outlived its Slurm task");
}

BOOST_AUTO_TEST_CASE(a_bad_hosts_line_exits_1_naming_file_and_line) {
  scratch dir;
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "localhost\nlocalhost workers=many\n");
  auto result = run_strom({"launch", "--hosts", hosts.string(), fashion_mlp_job}, dir.path(),
                          "launch", startup_limit);
  BOOST_TEST(result.status == 1);
  BOOST_TEST(contains(result.err, hosts.string() + ":2: 'workers=many'"), result.err);
}

// #39: a launch goes on from a checkpoint as `strom submit --resume` does: the job and its
// model come from the checkpoint (no job file), --epochs trains it longer, and the resumed run
// saves beside the run it came from.
BOOST_AUTO_TEST_CASE(a_launch_resumes_a_checkpoint_and_trains_it_longer) {
  scratch dir;
  const auto checkpoints = dir.path() / "checkpoints";
  auto first = run_strom({"train", fashion_mlp_job, "--workers", "1", "--epochs", "1",
                          "--checkpoint-dir", checkpoints.string()},
                         dir.path(), "train", launch_limit);
  BOOST_REQUIRE_MESSAGE(first.status == 0, first.err);
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "localhost workers=1\nlocalhost workers=1\n");
  const auto metrics = dir.path() / "metrics.json";
  child launch{{"launch", "--hosts", hosts.string(), "--resume", checkpoints.string(),
                "--epochs", "2", "--metrics-out", metrics.string()},
               dir.path(), "launch"};
  std::set<pid_t> started;
  const auto status = wait_noting_descendants(launch, launch_limit, started);
  BOOST_REQUIRE_MESSAGE(status.has_value(), "launch did not end\n" << launch.transcript());
  BOOST_REQUIRE_MESSAGE(*status == 0, launch.transcript());
  check_nothing_left(started, scheduler_port_in(launch.err()), launch.transcript());
  BOOST_TEST(contains(launch.err(), "resumes at epoch 2 on 2 nodes"), launch.transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "epochs") == 2.0, json);
  BOOST_TEST(json_number(json, "nodes") == 2.0, json);
  BOOST_TEST(fs::exists(checkpoints / "fashion_mlp" / "run-2" / "epoch-0002.ckpt"));
  // A job file and --resume together are refused before any process starts.
  auto both = run_strom({"launch", "--hosts", hosts.string(), fashion_mlp_job, "--resume",
                         checkpoints.string()},
                        dir.path(), "both", startup_limit);
  BOOST_TEST(both.status == 2);
  BOOST_TEST(contains(both.err, "give a JOB file or --resume PATH, not both"), both.err);
}

BOOST_AUTO_TEST_CASE(a_kvstore_launch_with_a_server_entry_reports_one_server) {
  scratch dir;
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "localhost role=server name=ps1\nlocalhost workers=1\nlocalhost workers=1\n");
  const auto run = launch_one_epoch(dir, {"--hosts", hosts.string(), "--mode", "kvstore"});
  BOOST_TEST(contains(run.metrics, "\"mode\":\"kvstore\""), run.metrics);
  BOOST_TEST(json_number(run.metrics, "servers") == 1.0, run.metrics);
  BOOST_TEST(json_number(run.metrics, "workers") == 2.0, run.metrics);
}

BOOST_AUTO_TEST_CASE(a_launch_with_a_tls_dir_trains_over_tls) {
  scratch dir;
  const auto certs = certificates_in(dir, "scheduler,w1,w2");
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "localhost name=w1 workers=1\nlocalhost name=w2 workers=1\n");
  const auto run = launch_one_epoch(dir, {"--hosts", hosts.string(), "--tls-dir", certs.string()});
  BOOST_TEST(json_number(run.metrics, "nodes") == 2.0);
  // Every process had its certificate: none of them said it runs unauthenticated.
  BOOST_TEST(!contains(run.transcript, "unauthenticated"), run.transcript);
}

BOOST_AUTO_TEST_CASE(a_launch_with_one_certificate_for_every_process_trains_over_tls) {
  scratch dir;
  const auto certs = certificates_in(dir, "cluster");
  const auto hosts = dir.path() / "hosts";
  // A named host joins under the certificate's name (a certificate binds its holders' names).
  write_text(hosts, "localhost name=w1 workers=1\nlocalhost workers=1\n");
  std::vector<std::string> args{"--hosts", hosts.string()};
  const auto tls = tls_options(certs, "cluster");
  args.insert(args.end(), tls.begin(), tls.end());
  const auto run = launch_one_epoch(dir, args);
  BOOST_TEST(json_number(run.metrics, "nodes") == 2.0);
  BOOST_TEST(!contains(run.transcript, "unauthenticated"), run.transcript);
  BOOST_TEST(contains(run.transcript, "'cluster/w1'"), run.transcript);
}

BOOST_AUTO_TEST_CASE(a_tls_dir_launch_needs_a_name_on_every_hosts_line) {
  scratch dir;
  const auto certs = certificates_in(dir, "scheduler,w1");
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "localhost name=w1\nlocalhost\n");
  auto result = run_strom({"launch", "--hosts", hosts.string(), "--tls-dir", certs.string(),
                           fashion_mlp_job},
                          dir.path(), "launch", startup_limit);
  BOOST_TEST(result.status == 1);
  BOOST_TEST(contains(result.err, hosts.string() + ":2: with --tls-dir every host needs name=NAME"),
             result.err);
}

BOOST_AUTO_TEST_CASE(a_hosts_line_with_a_bad_role_exits_1_naming_line_and_value) {
  scratch dir;
  const auto hosts = dir.path() / "hosts";
  write_text(hosts, "localhost\nlocalhost role=boss\n");
  auto result = run_strom({"launch", "--hosts", hosts.string(), fashion_mlp_job}, dir.path(),
                          "launch", startup_limit);
  BOOST_TEST(result.status == 1);
  BOOST_TEST(contains(result.err, hosts.string() + ":2: 'role=boss': the role is not worker or "
                                  "server"), result.err);
}
