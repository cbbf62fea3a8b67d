// strom launch: a whole cluster for one job. The scheduler runs here, on the machine that
// runs `strom launch` (it already holds the job file, and a terminal's Ctrl-C reaches it
// first); one `strom node --join` runs per hosts-file entry, here or over ssh; the job goes
// through `strom submit`'s own code; at its end, or on Ctrl-C, every process started is
// stopped. Under srun every task runs `strom launch`: task 0 as above, the others one node.

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "scheduler_link.hpp"
#include "submit_command.hpp"
#include "options/checkpoint_flags.hpp"
#include "options/tls_flags.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/launch/child_process.hpp"
#include "strom/runtime/launch/host_list.hpp"
#include "strom/runtime/launch/port_probe.hpp"
#include "strom/runtime/launch/slurm_nodelist.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "strom/runtime/stop_signals.hpp"

namespace strom::cli {

namespace {

using runtime::launch::child_output;
using runtime::launch::child_process;
using runtime::launch::launch_host;

/// The options only `strom launch` has; every other option goes on to `strom submit`.
const std::vector<option_spec> launch_options = {
  {"hosts", "FILE",
   "one host a line: localhost or 127.0.0.1 (a local node), or [user@]host[:port] (a node "
   "over ssh), optionally followed by workers=N, role=server (a kvstore job's server) and "
   "name=NAME (the node's name; needed with --tls-dir); # starts a comment"},
  {"workers", "N", "trainers of a node whose line sets no workers= (default: one per core)"},
  {"port", "PORT",
   "the scheduler's port (default: a free one; under Slurm 29500, which every task must share)"},
  {"advertise", "ADDRESS",
   "the address ssh nodes reach the scheduler (this machine) at (default: its host name)"},
  {"remote-strom", "PATH", "the strom program on ssh hosts (default: this program's path)"},
  {"ssh-key", "FILE", "ssh's identity file (-i)"},
  {"ssh-config", "FILE", "ssh's configuration file (-F)"},
  {"tls-dir", "DIR",
   "TLS with the certificates 'strom certs init DIR' made: the scheduler and launch's own "
   "connection use DIR/scheduler.pem, a node DIR/NAME.pem of its line's name=NAME (the same "
   "path on every host); instead, --tls-ca, --tls-cert and --tls-key give every process one "
   "certificate"},
};

/// Options of `strom submit` that make no sense here: launch owns the scheduler's address
/// and follows the job to its end.
const std::vector<std::string> submit_options_not_taken = {"to", "detach"};

/// The certificate name of the scheduler (and of launch's own connection) under --tls-dir,
/// as the README's `strom certs init DIR --nodes scheduler,...` makes it.
constexpr const char* scheduler_certificate_name = "scheduler";

const command_spec& launch_spec() {
  static const command_spec spec = [] {
    command_spec made{
      "strom launch (--hosts FILE | under srun) (JOB | --resume PATH) [launch and submit "
      "options]",
      "Starts a scheduler here and one 'strom node --join' per line of FILE (localhost: here;\n"
      "other hosts over 'ssh -tt', so that ending ssh ends the remote node), submits JOB as\n"
      "'strom submit' does (its options below pass through; with --resume the job goes on\n"
      "from a checkpoint read here), follows it to its end and stops every process it\n"
      "started. Ctrl-C (or SIGTERM) cancels the job first. Exits with the job's status: 0 when\n"
      "it succeeded, 1 when it failed.\n"
      "Under Slurm (SLURM_PROCID, SLURM_NODELIST, SLURM_NTASKS set by srun) run it as\n"
      "'srun strom launch JOB': task 0 runs the scheduler, a node and the job; every other\n"
      "task runs a node that joins the first host of SLURM_NODELIST on --port.\n"
      "Testing aid: STROM_LAUNCH_SCHEDULER_HOST replaces that first host.",
      launch_options,
      0,
      1,
    };
    for (const auto& option : submit_command_spec().options)
      if (std::find(submit_options_not_taken.begin(), submit_options_not_taken.end(),
                    option.name) == submit_options_not_taken.end())
        made.options.push_back(option);
    return made;
  }();
  return spec;
}

/// Under Slurm, the scheduler's port when --port is not given: every task must know it before
/// the scheduler runs. PyTorch's default MASTER_PORT, which cluster firewalls commonly open.
constexpr std::uint16_t default_slurm_port = 29500;

/// How long the scheduler may take to listen: it starts in well under a second.
constexpr auto scheduler_start_limit = std::chrono::seconds(30);
/// How long every node may take to join: an ssh login and a node's start (which measures its
/// speed) take a few seconds; a node that has not joined in two minutes will not.
constexpr auto join_limit = std::chrono::minutes(2);
/// How often launch asks the scheduler who joined, or a Slurm task looks for the scheduler.
constexpr auto join_poll = std::chrono::milliseconds(250);
/// A Slurm task's node gives up on a scheduler gone this long: at the job's end task 0 stops
/// the scheduler, and its nodes should end soon after (`strom node` accepts 2 s at least).
constexpr const char* slurm_node_reconnect_timeout = "5s";

const char* const command_name = "strom launch";

int usage(const std::string& message) {
  fmt::print(stderr, "{}: {}\n", command_name, message);
  return exit_usage;
}

int failed(const std::string& message) {
  fmt::print(stderr, "{}: {}\n", command_name, message);
  return failure_status();
}

/// The absolute path of this program, the default strom on ssh hosts too.
std::string this_program() {
  std::error_code ignored;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ignored);
  return path.empty() ? std::string{"strom"} : path.string();
}

/// The words of argv that are submit's options and the job, without launch's own options.
std::vector<std::string> submit_words(int argc, char** argv) {
  std::vector<std::string> words;
  for (int i = 0; i < argc; ++i) {
    const std::string word = argv[i];
    std::string name;
    if (word.rfind("--", 0) == 0)
      name = word.substr(2, std::min(word.find('='), word.size()) - 2);
    auto own = std::find_if(launch_options.begin(), launch_options.end(),
                            [&](const option_spec& o) { return o.name == name; });
    if (own == launch_options.end()) {
      words.push_back(word);
      continue;
    }
    if (!own->value_name.empty() && word.find('=') == std::string::npos)
      ++i;  // its value, a word of its own
  }
  return words;
}

/// Where each process launch starts finds its TLS files: nowhere (plaintext), one set for all
/// (the three --tls-* options), or one per name in --tls-dir.
struct launch_tls {
  std::optional<runtime::tls_files> shared;
  std::string shared_name;  ///< the shared certificate's name: every node's name begins with it
  std::string directory;

  /// What a host named `name` (maybe empty) joins as: with one certificate for every process,
  /// a name under the certificate's ("cluster/w1"), as the scheduler wants; else `name`.
  std::string node_name_of(const std::string& name) const {
    return shared && !name.empty() ? shared_name + "/" + name : name;
  }

  /// The files of the process named `name` (with --tls-dir a name is required); nullopt:
  /// plaintext.
  std::optional<runtime::tls_files> files_of(const std::string& name) const {
    if (shared || directory.empty())
      return shared;
    const std::filesystem::path dir{directory};
    return runtime::tls_files{(dir / "ca.pem").string(), (dir / (name + ".pem")).string(),
                              (dir / (name + ".key")).string()};
  }

  /// The --tls-* options of the process named `name`.
  std::vector<std::string> options_of(const std::string& name) const {
    const auto files = files_of(name);
    if (!files)
      return {};
    return {"--tls-ca", files->ca, "--tls-cert", files->certificate, "--tls-key", files->key};
  }
};

/// The TLS of a launch from `args`; with --tls-dir every file a process will load is loaded
/// here first, so that a missing certificate is named before any process starts.
result<launch_tls> launch_tls_of(const arguments& args, const std::vector<launch_host>& hosts) {
  launch_tls tls;
  const bool shared = args.has("tls-ca") || args.has("tls-cert") || args.has("tls-key");
  if (!args.has("tls-dir")) {
    if (!shared)
      return tls;
    auto loaded = tls_of(args);
    if (!loaded)
      return loaded.err();
    tls.shared = runtime::tls_files{*args.get("tls-ca"), *args.get("tls-cert"),
                                    *args.get("tls-key")};
    tls.shared_name = (*loaded)->identity().name;
    return tls;
  }
  if (shared)
    return error{"--tls-dir and --tls-ca/--tls-cert/--tls-key exclude each other"};
  tls.directory = *args.get("tls-dir");
  auto check = [&](const std::string& name) -> result<void> {
    auto loaded = runtime::tls_context::load(*tls.files_of(name));
    if (!loaded)
      return loaded.err();
    return {};
  };
  if (auto ok = check(scheduler_certificate_name); !ok)
    return error{"--tls-dir: the scheduler's certificate: " + ok.err().message};
  for (const auto& host : hosts) {
    if (host.name.empty())
      return error{fmt::format("{}: with --tls-dir every host needs name=NAME (its certificate "
                               "{}/NAME.pem)", host.origin, tls.directory)};
    if (auto ok = check(host.name); !ok)
      return error{fmt::format("{}: {}", host.origin, ok.err().message)};
  }
  return tls;
}

/// `text` in single quotes for the remote shell that ssh hands its command to.
std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return quoted + "'";
}

/// What `strom launch` starts, stopped when it goes: nodes first (they leave the scheduler),
/// then the scheduler.
struct cluster_processes {
  std::optional<child_process> scheduler;
  std::vector<child_process> nodes;
  std::vector<std::string> node_places;  ///< where each node runs, for messages

  ~cluster_processes() {
    for (auto& node : nodes)
      node.stop(runtime::launch::stop_grace);
    if (scheduler)
      scheduler->stop(runtime::launch::stop_grace);
  }

  /// An error naming the first node that has ended, if one has.
  std::optional<std::string> ended_node() {
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (auto status = nodes[i].poll())
        return fmt::format("the node on {} ended with status {} before the job began",
                           node_places[i], *status);
    return std::nullopt;
  }
};

/// Starts `strom node --scheduler` listening on `listen_host`:`port` and returns the port it
/// listens on.
result<std::uint16_t> start_scheduler(cluster_processes& cluster, const std::string& program,
                                      const std::string& listen_host, std::uint16_t port,
                                      const std::string& advertise, const launch_tls& tls) {
  std::vector<std::string> argv{program, "node", "--scheduler", "--listen",
                                runtime::to_string(runtime::endpoint{listen_host, port})};
  if (!advertise.empty())
    argv.insert(argv.end(), {"--advertise", advertise});
  const auto tls_options = tls.options_of(scheduler_certificate_name);
  argv.insert(argv.end(), tls_options.begin(), tls_options.end());
  auto started = child_process::start(argv, child_output::piped);
  if (!started)
    return started.err();
  auto& scheduler = cluster.scheduler.emplace(std::move(*started));
  const std::string marker = "listening on ";
  const auto deadline = std::chrono::steady_clock::now() + scheduler_start_limit;
  while (auto line = scheduler.read_line(deadline)) {
    const auto at = line->find(marker);
    if (at == std::string::npos)
      continue;
    const auto address = line->substr(at + marker.size(), line->find(' ', at + marker.size()) -
                                                            at - marker.size());
    auto listening = runtime::parse_endpoint(address);
    if (!listening)
      return error{fmt::format("the scheduler said '{}': {}", *line, listening.err().message)};
    fmt::print(stderr, "{}\n", *line);
    scheduler.forward_output();
    return listening->port;
  }
  if (runtime::stop_requested())
    return error{"interrupted while the scheduler started"};
  const auto status = scheduler.poll();
  return error{status ? fmt::format("the scheduler ended with status {} before it listened",
                                    *status)
                      : fmt::format("the scheduler did not listen within {} s",
                                    scheduler_start_limit.count())};
}

/// `strom node --join` for `host`, here or over ssh.
std::vector<std::string> node_command(const launch_host& host, const arguments& args,
                                      const std::string& program, const std::string& join,
                                      const std::string& advertise, const launch_tls& tls) {
  std::vector<std::string> node{host.local() ? program : args.get("remote-strom").value_or(program),
                                "node", "--join", join};
  if (!host.role.empty())
    node.insert(node.end(), {"--role", host.role});
  if (!host.name.empty())
    node.insert(node.end(), {"--name", tls.node_name_of(host.name)});
  const auto tls_options = tls.options_of(host.name);
  node.insert(node.end(), tls_options.begin(), tls_options.end());
  if (host.workers > 0)
    node.insert(node.end(), {"--workers", std::to_string(host.workers)});
  else if (auto workers = args.get("workers"))
    node.insert(node.end(), {"--workers", *workers});
  if (host.local() && !advertise.empty())
    node.insert(node.end(), {"--advertise", advertise});
  if (host.local())
    return node;
  // -tt gives the remote node a terminal: when ssh ends (launch stops it, or launch dies and
  // the kernel ends ssh), sshd hangs the terminal up and the kernel sends the node SIGHUP.
  // Without a terminal a remote command outlives a closed connection. BatchMode: a password
  // prompt would wait for ever.
  std::vector<std::string> ssh{"ssh", "-tt", "-o", "BatchMode=yes"};
  if (auto config = args.get("ssh-config"))
    ssh.insert(ssh.end(), {"-F", *config});
  if (auto key = args.get("ssh-key"))
    ssh.insert(ssh.end(), {"-i", *key});
  if (host.ssh_port != 0)
    ssh.insert(ssh.end(), {"-p", std::to_string(host.ssh_port)});
  std::string remote = "exec";  // the node itself holds the terminal and gets its hangup
  for (const auto& word : node) {
    remote += ' ';
    remote += shell_quoted(word);
  }
  ssh.insert(ssh.end(), {"--", host.ssh_destination(), remote});
  return ssh;
}

/// Waits until `expected` nodes joined the scheduler at `port` on this machine, connecting as
/// the submit `words` will.
result<void> wait_for_nodes(const std::vector<std::string>& words, cluster_processes& cluster,
                            std::uint16_t port, std::size_t expected) {
  const runtime::endpoint where{"127.0.0.1", port};
  std::vector<std::string> copy = words;
  std::vector<char*> argv;
  for (auto& word : copy)
    argv.push_back(word.data());
  auto args = parse_arguments(submit_command_spec(), static_cast<int>(argv.size()), argv.data());
  if (!args)
    return args.err();
  auto link = connect_scheduler(*args, where, command_name, "the scheduler it started");
  if (!link)
    return error{"the scheduler cannot be reached"};
  const auto deadline = std::chrono::steady_clock::now() + join_limit;
  std::size_t joined = 0;
  while (!runtime::stop_requested()) {
    if (auto ended = cluster.ended_node())
      return error{*ended};
    auto status = runtime::query_status(link->system, link->scheduler);
    if (!status)
      return error{fmt::format("the scheduler on {}: {}", runtime::to_string(where),
                               status.err().message)};
    joined = status->nodes.size();
    if (joined >= expected)
      return {};
    if (std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(join_poll);
  }
  if (runtime::stop_requested())
    return error{"interrupted before the job was submitted"};
  return error{fmt::format("{} of {} nodes joined within {} s", joined, expected,
                           std::chrono::duration_cast<std::chrono::seconds>(join_limit).count())};
}

/// Submits and follows the job through `strom submit`, to the scheduler at 127.0.0.1:`port`.
int submit_to(std::vector<std::string> words, std::uint16_t port) {
  words.insert(words.end(), {"--to", runtime::to_string(runtime::endpoint{"127.0.0.1", port})});
  std::vector<char*> argv;
  for (auto& word : words)
    argv.push_back(word.data());
  return run_submit(static_cast<int>(argv.size()), argv.data());
}

/// The scheduler's port from --port, `fallback` when not given.
result<std::uint16_t> port_of(const arguments& args, std::uint16_t fallback) {
  auto port = args.get_uint("port", 0, 65535);
  if (!port)
    return port.err();
  return static_cast<std::uint16_t>(port.value().value_or(fallback));
}

/// Starts the scheduler, a node per host and the job; returns the job's exit status.
int launch_hosts(const arguments& args, std::vector<std::string> submit_args,
                 const std::vector<launch_host>& hosts, const std::string& program) {
  auto port = port_of(args, 0);
  if (!port)
    return usage(port.err().message);
  auto tls = launch_tls_of(args, hosts);
  if (!tls)
    return failed(tls.err().message);
  if (!tls->directory.empty()) {  // launch's own connection and the submit: as the scheduler
    const auto own = tls->options_of(scheduler_certificate_name);
    submit_args.insert(submit_args.end(), own.begin(), own.end());
  }
  const bool all_local = std::all_of(hosts.begin(), hosts.end(),
                                     [](const launch_host& h) { return h.local(); });
  // With ssh hosts the scheduler listens everywhere and nodes join it at an address they
  // can reach; local nodes then advertise the same address, so that remote peers reach them.
  std::string advertise;
  if (!all_local) {
    advertise = args.get("advertise").value_or("");
    if (advertise.empty()) {
      char name[256] = {};
      if (::gethostname(name, sizeof name - 1) != 0)
        return failed("cannot read this machine's host name: give --advertise ADDRESS");
      advertise = name;
    }
  }
  cluster_processes cluster;
  auto listening = start_scheduler(cluster, program, all_local ? "127.0.0.1" : "0.0.0.0", *port,
                                   advertise, *tls);
  if (!listening)
    return failed(listening.err().message);
  const auto join = runtime::to_string(
    runtime::endpoint{all_local ? std::string{"127.0.0.1"} : advertise, *listening});
  for (const auto& host : hosts) {
    auto node = child_process::start(node_command(host, args, program, join, advertise, *tls),
                                     child_output::to_stderr);
    if (!node)
      return failed(fmt::format("{}: {}", host.origin, node.err().message));
    cluster.nodes.push_back(std::move(*node));
    cluster.node_places.push_back(fmt::format("{} ({})", host.ssh_destination(), host.origin));
  }
  if (auto ok = wait_for_nodes(submit_args, cluster, *listening, hosts.size()); !ok)
    return failed(ok.err().message);
  return submit_to(submit_args, *listening);
}

/// Task 0 of a Slurm step: the scheduler, a node and the job.
int launch_slurm_first(const arguments& args, const std::vector<std::string>& submit_args,
                       const runtime::launch::slurm_task& task, const std::string& program,
                       std::uint16_t port, const launch_tls& tls) {
  cluster_processes cluster;
  // Other tasks join from other machines: listen everywhere.
  auto listening = start_scheduler(cluster, program, "0.0.0.0", port, "", tls);
  if (!listening)
    return failed(listening.err().message);
  launch_host here;
  here.host = "localhost";
  auto node = child_process::start(
    node_command(here, args, program, runtime::to_string(runtime::endpoint{"127.0.0.1", port}),
                 "", tls),
    child_output::to_stderr);
  if (!node)
    return failed(node.err().message);
  cluster.nodes.push_back(std::move(*node));
  cluster.node_places.push_back("Slurm task 0 (here)");
  if (auto ok = wait_for_nodes(submit_args, cluster, *listening, task.tasks); !ok)
    return failed(ok.err().message);
  return submit_to(submit_args, *listening);
}

/// Any other task of a Slurm step: one node that joins task 0's scheduler. It ends when its
/// node ends: with status 0 when the scheduler is gone too (the job's end), else the node's.
int launch_slurm_node(const arguments& args, const runtime::endpoint& scheduler,
                      const std::string& program, const launch_tls& tls) {
  const auto where = runtime::to_string(scheduler);
  const auto deadline = std::chrono::steady_clock::now() + join_limit;
  while (!runtime::launch::accepts_connections(scheduler)) {
    if (runtime::stop_requested())
      return failed(fmt::format("interrupted while waiting for the scheduler on {}", where));
    if (std::chrono::steady_clock::now() >= deadline)
      return failed(fmt::format("no scheduler on {} within {} s", where,
                                std::chrono::duration_cast<std::chrono::seconds>(join_limit)
                                  .count()));
    std::this_thread::sleep_for(join_poll);
  }
  launch_host here;
  here.host = "localhost";
  auto command = node_command(here, args, program, where, "", tls);
  command.insert(command.end(), {"--reconnect-timeout", slurm_node_reconnect_timeout});
  auto node = child_process::start(command, child_output::to_stderr);
  if (!node)
    return failed(node.err().message);
  while (!runtime::stop_requested()) {
    if (auto status = node->poll())
      return *status == 0 || !runtime::launch::accepts_connections(scheduler) ? exit_ok
                                                                              : exit_failure;
    std::this_thread::sleep_for(runtime::signal_poll);
  }
  node->stop(runtime::launch::stop_grace);
  return failure_status();
}

} // namespace

int run_launch(int argc, char** argv) {
  runtime::stop_signals signals;  // Ctrl-C cancels the job, then stops every process
  auto parsed = parse_command(launch_spec(), command_name, argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  const auto& args = *parsed.args;
  const auto submit_args = submit_words(argc, argv);
  const auto program = this_program();
  // Checked before any process starts: a typo in the job (or a checkpoint that cannot be read)
  // should not cost a cluster's start.
  if (auto ok = check_job_or_resume(args); !ok)
    return usage(ok.err().message);
  runtime::local_training_options ignored;
  if (auto ok = read_checkpoint_dir(args, ignored); !ok)
    return usage(ok.err().message);
  if (auto job = read_job_or_resume(args, ignored); !job)
    return failed(job.err().message);
  if (auto workers = args.get_uint("workers", 1, max_workers); !workers)
    return usage(workers.err().message);

  if (auto hosts_file = args.get("hosts")) {
    auto hosts = runtime::launch::read_host_file(*hosts_file);
    if (!hosts)
      return failed(hosts.err().message);
    return launch_hosts(args, submit_args, *hosts, program);
  }
  auto task = runtime::launch::slurm_task_from_environment();
  if (!task)
    return failed(task.err().message);
  if (!*task)
    return usage("give --hosts FILE, or run it under srun (SLURM_PROCID and SLURM_NODELIST)");
  if (args.has("tls-dir"))
    return usage("--tls-dir needs a hosts file (its names pick the certificates); under Slurm "
                 "give --tls-ca, --tls-cert and --tls-key, one certificate for every task");
  auto tls = launch_tls_of(args, {});
  if (!tls)
    return failed(tls.err().message);
  auto port = port_of(args, default_slurm_port);
  if (!port)
    return usage(port.err().message);
  if (*port == 0)
    return usage("--port 0: under Slurm every task must know the scheduler's port in advance");
  if ((*task)->rank == 0)
    return launch_slurm_first(args, submit_args, **task, program, *port, *tls);
  const char* host_override = std::getenv("STROM_LAUNCH_SCHEDULER_HOST");
  const std::string host = host_override && *host_override ? host_override
                                                           : (*task)->nodes.front();
  return launch_slurm_node(args, runtime::endpoint{host, *port}, program, *tls);
}

} // namespace strom::cli
