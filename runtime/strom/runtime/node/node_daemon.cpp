#include "strom/runtime/node/node_daemon.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/actors/cluster/node_agent.hpp"
#include "strom/actors/cluster/scheduler.hpp"
#include "strom/log.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/node/node_startup.hpp"
#include "strom/runtime/observability/live_cluster.hpp"
#include "strom/runtime/node/reconnect_pause.hpp"
#include "strom/runtime/job/state_dir.hpp"
#include "strom/runtime/interruptible_wait.hpp"
#include "strom/runtime/stop_signals.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/transport/advertise_address.hpp"
#include "strom/runtime/transport/guarded_port.hpp"
#include "strom/runtime/node/pipeline_setup.hpp"

namespace strom::runtime {

namespace {

/// Time an actor told to stop may take to end (a node agent stops its job's actors first).
constexpr auto stop_wait = std::chrono::seconds(10);
/// How long a stopped scheduler's links stay open (its port closed) so that they carry the
/// scheduler's end, its exit reason, which its nodes read as a normal shutdown: a process that
/// exits at once closes them with that still unsent (2 of 5 tries on loopback).
constexpr auto shutdown_drain = std::chrono::milliseconds(500);

/// Margin over the agent's own join timeout before giving up on its answer.
constexpr auto join_answer_margin = std::chrono::seconds(5);

/// How often a pause looks for a stop signal.
constexpr auto reconnect_poll = std::chrono::milliseconds(20);
/// The least time one try gets for connect and handshake, even just before the deadline.
constexpr auto min_connect_attempt = std::chrono::milliseconds(100);

/// Waits until `watched` ends (its exit reason) or a stop signal arrives (nullopt).
std::optional<caf::error> wait_for_end_or_signal(caf::scoped_actor& self,
                                                 const caf::actor& watched) {
  std::optional<caf::error> reason;
  receive_until(self, caf::timespan::max(), on_stop::end_wait, [&] { return reason.has_value(); },
                [&](caf::down_msg& down) {
                  if (down.source == watched.address())
                    reason = std::move(down.reason);
                });
  return reason;
}

/// Tells `watched` to stop and waits, bounded, until it has.
void stop_and_wait(caf::scoped_actor& self, const caf::actor& watched) {
  self->send_exit(watched, caf::exit_reason::user_shutdown);
  bool ended = false;
  self->receive_while([&] { return !ended; })(
    [&](const caf::down_msg& down) { ended = down.source == watched.address(); },
    caf::after(stop_wait) >> [&] {
      log::warning("{} did not stop within {} s", to_string(watched), stop_wait.count());
      ended = true;
    });
}

/// Ends every actor of `self`'s system that was handed to remote nodes: those stay in the
/// system's registry, held, until they end, and ~actor_system waits for them (a running
/// job's hub relay outlives a stopped scheduler).
void stop_exposed_actors(caf::scoped_actor& self) {
  caf::scoped_actor probe{self->system()};  // the newest actor: every other id lies below
  auto& registry = self->system().registry();
  for (caf::actor_id id = 1; id < probe->id(); ++id)
    if (id != self->id())
      if (auto exposed = registry.get<caf::actor>(id))
        caf::anon_send_exit(exposed, caf::exit_reason::user_shutdown);
}

/// Stops the daemon's `main` actor, then what it left behind.
void stop_daemon(caf::scoped_actor& self, const caf::actor& main) {
  stop_and_wait(self, main);
  stop_exposed_actors(self);
}

/// The local address this machine uses to reach `peer` (the kernel's route choice, found by
/// connecting a UDP socket, which sends nothing); empty when it cannot tell.
std::string local_address_towards(const endpoint& peer) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const auto port = std::to_string(peer.port == 0 ? 9 : peer.port);
  if (getaddrinfo(peer.host.c_str(), port.c_str(), &hints, &found) != 0 || !found)
    return {};
  std::string address;
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in local{};
  socklen_t length = sizeof local;
  char text[INET_ADDRSTRLEN] = {};
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0
      && ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0
      && inet_ntop(AF_INET, &local.sin_addr, text, sizeof text) != nullptr)
    address = text;
  if (fd >= 0)
    ::close(fd);
  freeaddrinfo(found);
  return address;
}

/// A scheduler holds three descriptors per peer link (link_guard.hpp): the daemon may use
/// every descriptor its hard limit allows, not only the soft default of 1024.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

/// HOSTNAME:PID, unique on one machine.
std::string default_node_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0)
    std::snprintf(host, sizeof host, "localhost");
  return fmt::format("{}:{}", host, ::getpid());
}

} // namespace

result<guarded_connection> connect_to_scheduler(caf::actor_system& system, const endpoint& where,
                                                const connect_options& options) {
  auto connection = connect_guarded(system, where, "scheduler", options);
  if (!connection)
    return error{"cannot reach the scheduler: " + connection.err().message};
  return connection;
}

namespace {

/// How long the dashboard waits for the scheduler's status: a page a second polls it.
constexpr auto dashboard_status_timeout = std::chrono::seconds(1);

/// The dashboard's view of `scheduler` while this lives: it ends before the actor system the
/// view asks through, so no page request reaches a system that is gone.
class dashboard_view {
public:
  dashboard_view(live_cluster* live, caf::actor_system& system, const caf::actor& scheduler)
    : live_(live) {
    if (!live_)
      return;
    live_->set_view([&system, scheduler]() -> std::optional<actors::cluster_status> {
      client_limits limits;
      limits.answer = dashboard_status_timeout;
      auto status = query_status(system, scheduler, limits);
      return status ? std::optional{std::move(*status)} : std::nullopt;
    });
  }
  ~dashboard_view() {
    if (live_)
      live_->set_view({});
  }
  dashboard_view(const dashboard_view&) = delete;
  dashboard_view& operator=(const dashboard_view&) = delete;

private:
  live_cluster* live_;
};

} // namespace

result<void> run_scheduler_node(const scheduler_node_options& options) {
  auto advertised = choose_advertise_address({options.advertise, options.netmask,
                                              options.listen.host});
  if (!advertised)
    return advertised.err();
  raise_descriptor_limit();
  stop_signals signals;
  actors::scheduler_setup setup;
  setup.timeouts = options.timeouts;
  setup.checkpoint_every = options.checkpoint_every;
  if (!options.state_dir.empty()) {
    auto store = state_dir_store::open(options.state_dir);
    if (!store)
      return store.err();
    auto record = (*store)->load();
    if (!record)
      return error{fmt::format("the scheduler cannot take up its state: {} (move the file "
                               "away to start afresh)", record.err().message)};
    setup.store = *store;
    setup.restored = std::move(*record);
  }
  auto guard = options.guard;
  if (guard.tls.context) {
    // Clients connect here too; the join check keeps them from joining as nodes.
    auto peers = std::make_shared<peer_registry>();
    guard.tls.admit_clients = true;
    guard.tls.peers = peers;
    setup.node_admission = [peers](const caf::node_id& node, const std::string& name) {
      return join_refusal(*peers, node, name);
    };
  } else {
    warn_unauthenticated_once();
  }
  auto observe = options.observe;
  observe.dashboard = true;
  auto watching = observation::start(observe);
  if (!watching)
    return watching.err();
  setup.metrics = (*watching)->hooks().metrics;
  setup.place = place_job;
  system_config config{true};
  caf::actor_system system{config};
  auto scheduler = system.spawn(actors::scheduler, setup);
  const dashboard_view viewing{(*watching)->dashboard(), system, scheduler};
  caf::scoped_actor self{system};
  self->monitor(scheduler);
  auto port = guarded_port::open(system, scheduler, options.listen, guard);
  if (!port) {
    stop_and_wait(self, scheduler);
    return port.err();
  }
  const endpoint listening{options.listen.host, (*port)->port()};
  fmt::print("strom scheduler listening on {} (advertised as {})\n", to_string(listening),
             to_string(endpoint{*advertised, listening.port}));
  std::fflush(stdout);
  if (auto ended = wait_for_end_or_signal(self, scheduler)) {
    stop_exposed_actors(self);
    return error{fmt::format("the scheduler on {} stopped: {}", to_string(listening),
                             actors::error_text(system, *ended))};
  }
  log::info("scheduler on {}: stopping", to_string(listening));
  (*port)->stop_listening();  // a node reconnecting meanwhile finds no stopped scheduler
  stop_daemon(self, scheduler);
  std::this_thread::sleep_for(shutdown_drain);
  return success();
}

result<guarded_connection> reconnect_to_scheduler(caf::actor_system& system,
                                                  const endpoint& where,
                                                  const connect_options& options,
                                                  caf::timespan limit) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + limit;
  std::chrono::milliseconds pause = first_reconnect_pause;
  for (;;) {
    auto attempt = options;
    const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    attempt.timeout = std::max(std::min(options.timeout, left), min_connect_attempt);
    auto connection = connect_to_scheduler(system, where, attempt);
    if (connection || clock::now() >= deadline
        || (options.interrupted && options.interrupted()))
      return connection;
    for (const auto until = std::min(clock::now() + pause, deadline); clock::now() < until;) {
      if (options.interrupted && options.interrupted())
        return connection;
      std::this_thread::sleep_for(reconnect_poll);
    }
    pause = next_reconnect_pause(pause);
  }
}

namespace {

/// How a worker node's time with one scheduler ended without an error.
enum class session_end {
  stopped,            ///< SIGINT or SIGTERM
  scheduler_lost,     ///< the connection broke: connect again
  scheduler_stopped,  ///< the scheduler shut down on purpose: wait for a restart, else end
};

/// Joins the scheduler reached by `scheduler` and trains its jobs until a stop signal or the
/// scheduler's loss.
result<session_end> serve_scheduler(caf::actor_system& system, const worker_node_options& options,
                                    const node_identity& identity,
                                    const guarded_connection& scheduler, const observers& watch) {
  const auto where = to_string(options.scheduler);
  const auto& name = identity.name;
  caf::scoped_actor self{system};
  const auto join_limit = options.timeouts.join_timeout + join_answer_margin;
  auto agent = spawn_node(system, scheduler.remote, identity, caf::actor_cast<caf::actor>(self),
                          options.timeouts, watch);
  self->monitor(agent);
  std::optional<actors::join_reply> answer;
  const auto waited_for_join =
    receive_until(self, join_limit, on_stop::end_wait, [&] { return answer.has_value(); },
                  [&](const actors::join_reply& reply) { answer = reply; });
  if (waited_for_join == wait_end::interrupted) {
    log::info("node '{}': stopping before the scheduler answered the join", name);
    stop_daemon(self, agent);
    return session_end::stopped;
  }
  if (!answer) {
    stop_and_wait(self, agent);
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(join_limit).count();
    return error{fmt::format("node '{}': no answer to the join from the scheduler at {} "
                             "within {} s", name, where, waited)};
  }
  // A refused join ends the agent: its exit reason below says why.
  if (answer->accepted) {
    fmt::print("strom node '{}' joined the scheduler at {} as node {} with {} worker{}\n", name,
               where, answer->node_id, identity.workers, identity.workers == 1 ? "" : "s");
    std::fflush(stdout);
  }
  if (auto ended = wait_for_end_or_signal(self, agent)) {
    stop_exposed_actors(self);
    const auto code = actors::strom_code_of(*ended);
    const double waits = std::chrono::duration<double>(options.timeouts.reconnect_timeout).count();
    if (code == actors::strom_error::scheduler_lost) {
      log::warning("node '{}': {}; connecting again for up to {:g} s", name,
                   actors::error_text(system, *ended), waits);
      return session_end::scheduler_lost;
    }
    // A normal shutdown (an operator's restart, the end of a launch) is no alarm.
    if (code == actors::strom_error::scheduler_stopped) {
      log::info("node '{}': the scheduler shut down; waiting up to {:g} s for it to restart",
                name, waits);
      return session_end::scheduler_stopped;
    }
    return error{fmt::format("node '{}' (scheduler {}): {}", name, where,
                             actors::error_text(system, *ended))};
  }
  log::info("node '{}': stopping", name);
  stop_daemon(self, agent);
  return session_end::stopped;
}

/// The name the node joins under: --name, checked against its certificate's; without --name,
/// the certificate's name and this process (several processes may share one certificate), or
/// without TLS this host and process.
result<std::string> node_name_of(const worker_node_options& options) {
  if (!options.tls)
    return options.name.empty() ? default_node_name() : options.name;
  const auto& certified = options.tls->identity().name;
  if (options.name.empty())
    return certified + "/" + default_node_name();
  if (!name_fits_certificate(options.name, certified))
    return error{fmt::format("--name {}: the certificate is made out to '{}', and {}",
                             options.name, certified, certificate_name_rule(certified))};
  return options.name;
}

} // namespace

result<void> run_worker_node(const worker_node_options& options) {
  auto name = node_name_of(options);
  if (!name)
    return name.err();
  auto advertised = choose_advertise_address(
    {options.advertise, options.netmask, local_address_towards(options.scheduler)});
  if (!advertised)
    return advertised.err();
  stop_signals signals;
  auto watching = observation::start(options.observe);
  if (!watching)
    return watching.err();
  system_config config{true};
  caf::actor_system system{config};
  connect_options connecting;
  connecting.timeout = options.connect_timeout;
  connecting.interrupted = [] { return stop_requested(); };
  connecting.limits.tls.context = options.tls;
  if (!options.tls)
    warn_unauthenticated_once();
  auto scheduler = connect_to_scheduler(system, options.scheduler, connecting);
  if (!scheduler)
    return scheduler.err();
  node_identity identity{
    std::move(*name), *advertised,
    options.workers ? options.workers : std::max(1u, std::thread::hardware_concurrency()),
    {}, *advertised, options.role, options.tls};
  identity.memory_limit = options.memory_limit;
  identity.device = options.device;
  identity.speed = options.speed;
  if (options.role == actors::node_role_worker)
    identity.compute_rate = measure_node_compute_rate(options.speed.factor);
  const auto served = [&]() -> result<void> {
    for (;;) {
      auto ended = serve_scheduler(system, options, identity, *scheduler, (*watching)->hooks());
      if (!ended)
        return ended.err();
      if (*ended == session_end::stopped)
        return success();
      scheduler = reconnect_to_scheduler(system, options.scheduler, connecting,
                                         options.timeouts.reconnect_timeout);
      if (!scheduler && stop_requested())
        return success();
      if (!scheduler && *ended == session_end::scheduler_stopped) {
        log::info("node '{}': the scheduler did not restart; stopping", identity.name);
        return success();
      }
      if (!scheduler) {
        const std::chrono::duration<double> waited = options.timeouts.reconnect_timeout;
        return error{fmt::format("node '{}': the scheduler at {} did not come back within "
                                 "{:g} s (--reconnect-timeout): {}",
                                 identity.name, to_string(options.scheduler), waited.count(),
                                 scheduler.err().message)};
      }
    }
  }();
  // The node's timeline holds what it trained up to its end, however it ended.
  auto written = (*watching)->finish();
  return served ? written : served;
}

} // namespace strom::runtime
