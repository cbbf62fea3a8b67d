#include <fmt/format.h>

#include <chrono>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "options/observation_flags.hpp"
#include "scheduler_link.hpp"
#include "options/tls_flags.hpp"
#include "strom/runtime/node/capacity_text.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/node/node_daemon.hpp"

namespace strom::cli {

namespace {

const command_spec node_spec = with_timeline_option(with_stall_option(with_observation_options({
  "strom node (--scheduler --listen HOST:PORT | --join HOST:PORT) [options]",
  "Runs a cluster node until SIGINT or SIGTERM. With --scheduler it admits worker nodes and\n"
  "runs the jobs clients submit, and prints 'strom scheduler listening on HOST:PORT' once it\n"
  "listens (port 0: a free port). With --join it joins that scheduler and trains its jobs;\n"
  "a worker the scheduler dropped (e.g. one stopped for longer than the heartbeat timeout)\n"
  "exits with status 1 saying so. A worker whose scheduler is lost (it crashed, restarts or\n"
  "stopped) joins it again under its name once it is back, within --reconnect-timeout.",
  with_tls_options({
    {"scheduler", "", "run the cluster's scheduler"},
    {"listen", "HOST:PORT", "where the scheduler accepts nodes and clients (0.0.0.0: everywhere)"},
    {"join", "HOST:PORT", "join the scheduler at HOST:PORT as a worker node"},
    {"workers", "N", "trainers this node runs (default: one per core)"},
    {"device", "D", "where this node's workers step, whatever the job says: cpu or cuda"},
    {"role", "ROLE",
     "worker (trains, the default) or server (holds the parameters of kvstore jobs)"},
    {"name", "NAME", "the node's unique name in the cluster (default: HOSTNAME:PID)"},
    {"memory-limit", "BYTES",
     "the most memory strom may place on this node (e.g. 7MiB, 2G); shown by strom status"},
    {"speed-factor", "F",
     "testing aid: compute F times as fast (0 < F <= 1) by waiting (1/F - 1) times each "
     "computation's duration after it", true},
    {"speed-drift", "F@EPOCH",
     "testing aid: from epoch EPOCH on compute at speed factor F instead (a machine that "
     "another workload starts sharing; pipeline jobs re-partition after it)", true},
    {"advertise", "ADDRESS", "the address other nodes reach this one at"},
    {"netmask", "CIDR", "advertise the local address inside this network (e.g. 10.0.0.0/8)"},
    {"heartbeat-interval", "DURATION",
     "scheduler: ping every node this often (default 1s; a bare number is milliseconds)"},
    {"heartbeat-timeout", "DURATION",
     "scheduler: a node silent this long is lost (default 10s; a bare number is milliseconds)"},
    {"state-dir", "DIR",
     "scheduler: keep membership, jobs and checkpoints in DIR; started again with the same DIR "
     "it resumes the running jobs from their last checkpoints (default: keep nothing)"},
    {"checkpoint-every", "STEPS",
     "scheduler with --state-dir: checkpoint a job at the first epoch end after this many "
     "steps (default 0: every epoch)"},
    connect_timeout_option(),
    {"reconnect-timeout", "DURATION",
     "worker: give up on a scheduler that answers nothing this long, or that is gone and not "
     "back within it (default 60s)"},
  }),
  0,
})));

/// Bounds of the heartbeat options: below 10 ms pings cost more than they tell; above an hour
/// a hung node would hold a job for longer than anyone waits.
constexpr auto min_heartbeat = std::chrono::milliseconds(10);
constexpr auto max_heartbeat = std::chrono::hours(1);

/// Bounds of --reconnect-timeout: a node asks the scheduler every second
/// (actors::timing::keepalive_interval), so less than two seconds would give up after one
/// unanswered keepalive; beyond a day a node would wait for a scheduler nobody restarts.
constexpr std::chrono::milliseconds min_reconnect_timeout = std::chrono::seconds(2);
constexpr std::chrono::milliseconds max_reconnect_timeout = std::chrono::hours(24);

/// Most steps between checkpoints: a billion steps is more than any job takes.
constexpr std::uint64_t max_checkpoint_every = 1'000'000'000;

int usage(const std::string& message) {
  fmt::print(stderr, "strom node: {}\n", message);
  return exit_usage;
}

int run_scheduler(const arguments& args) {
  for (const char* worker_only :
       {"join", "workers", "device", "role", "name", "connect-timeout", "reconnect-timeout", "timeline",
        "memory-limit", "speed-factor", "speed-drift"})
    if (args.has(worker_only))
      return usage(fmt::format("--{} is for worker nodes, not with --scheduler", worker_only));
  auto listen = args.get_endpoint("listen");
  if (!listen)
    return usage(listen.err().message);
  // Bare numbers stay milliseconds, as these options took them before they took units.
  const auto ms = std::chrono::milliseconds(1);
  auto interval = args.get_duration("heartbeat-interval", min_heartbeat, max_heartbeat, ms);
  auto timeout = args.get_duration("heartbeat-timeout", min_heartbeat, max_heartbeat, ms);
  for (const auto* parsed : {&interval, &timeout})
    if (!parsed->ok())
      return usage(parsed->err().message);
  auto checkpoint_every = args.get_uint("checkpoint-every", 0, max_checkpoint_every);
  if (!checkpoint_every)
    return usage(checkpoint_every.err().message);
  if (args.has("checkpoint-every") && !args.has("state-dir"))
    return usage("--checkpoint-every needs --state-dir: checkpoints are kept there");
  runtime::scheduler_node_options options;
  options.listen = *listen;
  auto observe = read_observation_flags(args);
  if (!observe)
    return usage(observe.err().message);
  options.observe = *observe;
  if (auto ok = read_stall_warning(args, options.timeouts); !ok)
    return usage(ok.err().message);
  options.state_dir = args.get("state-dir").value_or("");
  if (args.has("state-dir") && options.state_dir.empty())
    return usage("--state-dir must not be empty");
  options.checkpoint_every = checkpoint_every.value().value_or(0);
  options.advertise = args.get("advertise").value_or("");
  options.netmask = args.get("netmask").value_or("");
  if (auto every = interval.value())
    options.timeouts.heartbeat_interval = *every;
  if (auto silent = timeout.value())
    options.timeouts.heartbeat_timeout = *silent;
  if (options.timeouts.heartbeat_timeout <= options.timeouts.heartbeat_interval)
    return usage(fmt::format("--heartbeat-timeout ({} ms) must exceed --heartbeat-interval ({} ms)",
                             std::chrono::duration_cast<std::chrono::milliseconds>(
                               options.timeouts.heartbeat_timeout).count(),
                             std::chrono::duration_cast<std::chrono::milliseconds>(
                               options.timeouts.heartbeat_interval).count()));
  auto tls = tls_of(args);
  if (!tls) {
    fmt::print(stderr, "strom node: {}\n", tls.err().message);
    return exit_failure;
  }
  options.guard.tls.context = *tls;
  if (auto ok = runtime::run_scheduler_node(options); !ok) {
    fmt::print(stderr, "strom node: {}\n", ok.err().message);
    return exit_failure;
  }
  return exit_ok;
}

int run_worker(const arguments& args) {
  for (const char* scheduler_only :
       {"listen", "heartbeat-interval", "heartbeat-timeout", "state-dir", "checkpoint-every",
        "stall-warning"})
    if (args.has(scheduler_only))
      return usage(fmt::format("--{} is for the scheduler, not with --join", scheduler_only));
  auto join = args.get_endpoint("join");
  if (!join)
    return usage(join.err().message);
  auto workers = args.get_uint("workers", 1, max_workers);
  if (!workers)
    return usage(workers.err().message);
  auto reconnect = args.get_duration("reconnect-timeout", min_reconnect_timeout,
                                     max_reconnect_timeout);
  if (!reconnect)
    return usage(reconnect.err().message);
  runtime::worker_node_options options;
  options.scheduler = *join;
  auto observe = read_observation_flags(args);
  if (!observe)
    return usage(observe.err().message);
  options.observe = *observe;
  options.name = args.get("name").value_or("");
  options.advertise = args.get("advertise").value_or("");
  options.netmask = args.get("netmask").value_or("");
  options.workers = static_cast<std::uint32_t>(workers.value().value_or(0));
  options.role = args.get("role").value_or(actors::node_role_worker);
  if (auto text = args.get("device")) {
    auto device = runtime::parse_device(*text);
    if (!device)
      return usage("--device: " + device.err().message);
    options.device = *device;
  }
  if (options.role != actors::node_role_worker && options.role != actors::node_role_server)
    return usage(fmt::format("--role: '{}' is not worker or server", options.role));
  if (auto timeout = reconnect.value())
    options.timeouts.reconnect_timeout = *timeout;
  if (args.has("name") && options.name.empty())
    return usage("--name must not be empty");
  if (auto text = args.get("memory-limit")) {
    auto limit = runtime::parse_byte_count(*text, "--memory-limit");
    if (!limit)
      return usage(limit.err().message);
    options.memory_limit = *limit;
  }
  if (auto text = args.get("speed-factor")) {
    auto factor = runtime::parse_speed_factor(*text, "--speed-factor");
    if (!factor)
      return usage(factor.err().message);
    options.speed.factor = *factor;
  }
  if (auto text = args.get("speed-drift")) {
    auto drift = runtime::parse_speed_drift(*text, "--speed-drift");
    if (!drift)
      return usage(drift.err().message);
    options.speed.drift = *drift;
  }
  auto connect_timeout = connect_timeout_of(args);
  if (!connect_timeout)
    return usage(connect_timeout.err().message);
  options.connect_timeout = *connect_timeout;
  auto tls = tls_of(args);
  if (!tls) {
    fmt::print(stderr, "strom node: {}\n", tls.err().message);
    return exit_failure;
  }
  options.tls = *tls;
  if (auto ok = runtime::run_worker_node(options); !ok) {
    fmt::print(stderr, "strom node: {}\n", ok.err().message);
    return exit_failure;
  }
  return exit_ok;
}

} // namespace

int run_node(int argc, char** argv) {
  auto parsed = parse_command(node_spec, "strom node", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  if (args->has("scheduler") == args->has("join"))
    return usage("give either --scheduler (with --listen) or --join HOST:PORT");
  return args->has("scheduler") ? run_scheduler(*args) : run_worker(*args);
}

} // namespace strom::cli
