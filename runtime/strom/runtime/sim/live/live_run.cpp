#include "strom/runtime/sim/live/live_run.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <thread>

#include <caf/scheduler/test_coordinator.hpp>

#include "strom/actors/cluster/scheduler.hpp"
#include "strom/runtime/node/node_startup.hpp"
#include "strom/runtime/node/pipeline_setup.hpp"
#include "strom/runtime/sim/live/live_network.hpp"
#include "strom/runtime/sim/live/live_stand_ins.hpp"
#include "strom/runtime/sim/live/memory_store.hpp"
#include "strom/runtime/sim/live/virtual_seconds.hpp"
#include "strom/runtime/system_config.hpp"

namespace strom::runtime::sim {

namespace {

using namespace std::chrono_literals;
using time_point = caf::actor_clock::time_point;
/// One line of the run's trace (ordered as written).
using trace_line = nlohmann::ordered_json;

/// A run that reaches this much virtual time without the job ending has hung.
constexpr auto virtual_time_limit = std::chrono::hours(24);

/// The admission token of the simulated cluster (no other process can reach it).
constexpr const char* sim_token = "strom-sim";

caf::scheduler::test_coordinator& coordinator(caf::actor_system& system) {
  return dynamic_cast<caf::scheduler::test_coordinator&>(system.scheduler());
}

/// A node's computation in virtual time: the scenario's costs at the node's speed, shared
/// by its workers (each has a core of its own).
class node_meter final : public actors::compute_meter {
public:
  node_meter(const step_costs& costs, double speed, std::uint32_t workers,
             std::uint64_t& job_steps)
      : costs_(costs), speed_(speed), workers_(workers), job_steps_(job_steps) {}

  void step_computed() override {
    owed_ += costs_.step_seconds + costs_.encode_seconds + costs_.overhead_seconds;
    ++job_steps_;
    ++steps_;
  }
  void frame_applied() override { owed_ += costs_.decode_seconds; }

  /// What was computed since the last call, as the node's time.
  caf::timespan take() {
    const double owed = owed_ * slowdown_ / (speed_ * workers_);
    owed_ = 0;
    return to_timespan(owed);
  }

  void slow_down(double factor) { slowdown_ = factor; }

  /// Steps the node's workers computed so far, together.
  std::uint64_t steps() const noexcept { return steps_; }

private:
  step_costs costs_;
  double speed_;
  std::uint32_t workers_;
  std::uint64_t& job_steps_;
  double owed_ = 0;
  double slowdown_ = 1;
  std::uint64_t steps_ = 0;
};

/// How often a node's samples/s is sampled for the report's chart, in virtual time.
constexpr auto rate_interval = std::chrono::milliseconds(100);

/// One simulated machine: its actor system and what runs on it.
struct live_node {
  node_model model;
  std::size_t endpoint = 0;  ///< in the network
  std::unique_ptr<system_config> config;
  std::unique_ptr<caf::actor_system> system;
  caf::actor agent;  ///< null for the scheduler's machine
  caf::actor daemon;  ///< restarts the agent after the scheduler's restart
  std::shared_ptr<node_meter> meter;
  time_point busy_until{};
  bool frozen = false;  ///< hung, or silently killed: its system does not run
  bool dead = false;    ///< killed (a restart starts a new node of its name)
  bool cut_off = false; ///< on the far side of a partition from the scheduler
  std::uint64_t sampled_steps = 0;        ///< at the last rate sample
  std::vector<timed_value> rate;          ///< samples/s over time
};

/// Whether the node's system runs: not hung, not silently dead, not cut off by a partition
/// (the scheduler's side hears nothing from it, and it hears nothing. The plain topology routes
/// every frame through the scheduler's machine, so a cut-off node could compute at most the one
/// step the staleness bound allows; what a mesh's cut-off subtree would still pass among
/// itself is not simulated).
bool runs(const live_node& node) { return !node.frozen && !node.cut_off; }

/// What live mode needs, checked before anything starts.
result<void> require_live_costs(const scenario& s) {
  if (!s.costs)
    return error{fmt::format("{}: costs: live mode charges each step the scenario's costs in "
                             "virtual time: name a calibration file or give them",
                             s.source)};
  return success();
}

/// The links' TLS: `identity` (may be null) at the scenario's calibrated rates.
live_tls tls_of(const scenario& s, const tls_context* identity) {
  if (!identity || !s.costs)
    return {};
  return {identity, s.costs->tls_seal_bytes_per_second, s.costs->tls_open_bytes_per_second};
}

class live_run {
public:
  live_run(const scenario& s, std::uint64_t seed, sim_trace& trace, training_observer* observer,
           const tls_context* tls)
      : s_(s), seed_(seed), trace_(trace), observer_(observer), random_(seed),
        network_(seed + 1, trace, now_, tls_of(s, tls)) {}

  result<model_outcome> run();

private:
  live_node& start_system(node_model model);
  result<void> start_node(node_model model);
  caf::actor_system& home() { return *nodes_.front()->system; }
  void wait_for_helpers();
  void send_jobs_home();
  bool run_one();
  void advance_to(time_point t);
  std::optional<time_point> next_wakeup() const;
  void fire_due_events();
  void fire(const scenario_event& e);
  live_node* node_named(const std::string& name);
  std::vector<std::size_t> endpoints_of(const std::vector<std::string>& names);
  void sample_rates();
  std::uint32_t epochs_to_run() const;
  /// Whether the job has started: a worker computed a step.
  bool training() const { return job_steps_ > 0; }
  void start_scheduler();
  void note_resumed();
  void shut_down();
  model_outcome outcome() const;

  const scenario& s_;
  std::uint64_t seed_;
  sim_trace& trace_;
  training_observer* observer_;
  std::mt19937_64 random_;
  time_point now_{};
  live_network network_;
  actors::timing timeouts_;
  std::vector<std::unique_ptr<live_node>> nodes_;  // [0]: the scheduler's machine
  scheduler_slot scheduler_ = std::make_shared<caf::actor>();
  actors::scheduler_setup scheduler_setup_;
  std::shared_ptr<memory_store> store_;  // only when the scenario restarts the scheduler
  caf::actor client_;
  std::optional<std::size_t> resuming_;  // the fault of a scheduler kill, until a step again
  std::uint64_t steps_at_kill_ = 0;
  client_log log_;
  std::uint64_t job_steps_ = 0;
  time_point job_start_{};
  std::vector<double> fired_at_;  // seconds since the job started; -1: not fired yet
  time_point sampled_{};
  std::vector<model_fault> faults_;
};

live_node& live_run::start_system(node_model model) {
  auto node = std::make_unique<live_node>();
  // The middleman only for a node id of its own (CAF tells actors apart by id and node: of
  // systems without one, actors of equal ids would be taken for each other), on CAF's test
  // network backend: no sockets, no thread.
  node->config = std::make_unique<system_config>(true);
  node->config->set("scheduler.policy", caf::atom("testing"));
  node->config->set("middleman.network-backend", caf::atom("testing"));
  node->system = std::make_unique<caf::actor_system>(*node->config);
  node->endpoint = network_.add({model.name, node->system.get(), model.link});
  node->model = std::move(model);
  auto& clock = coordinator(*node->system).clock();
  clock.current_time = now_;
  nodes_.push_back(std::move(node));
  return *nodes_.back();
}

result<void> live_run::start_node(node_model model) {
  for (const auto& node : nodes_)
    if (node->model.name == model.name && !node->dead)
      return error{fmt::format("{}: node {} runs already", s_.source, model.name)};
  auto& node = start_system(std::move(model));
  node.meter = std::make_shared<node_meter>(*s_.costs, node.model.speed_factor,
                                            node.model.workers, job_steps_);
  node_identity identity{node.model.name, "sim", node.model.server ? 1 : node.model.workers,
                        sim_token};
  if (node.model.server)
    identity.role = actors::node_role_server;
  auto& simulation = identity.simulation;
  simulation.meter = node.meter;
  simulation.reach_relay = [this, endpoint = node.endpoint](const caf::actor& peer) {
    return network_.reach(endpoint, peer);
  };
  simulation.publish_relay =
    [this, endpoint = node.endpoint](const caf::actor& relay) -> result<actors::published_relay> {
    return actors::published_relay{network_.publish(endpoint, relay), nullptr};
  };
  // Called on the agent's helper thread, while the run waits for it (wait_for_helpers).
  simulation.connect_relay =
    [this, endpoint = node.endpoint](const std::string& text) -> result<actors::relay_link> {
    auto link = network_.connect(endpoint, text);
    if (!link)
      return link.err();
    return actors::relay_link{*link, nullptr};
  };
  node.agent = spawn_node(*node.system, *scheduler_, identity, client_, timeouts_);
  node.daemon =
    node.system->spawn(node_daemon, daemon_setup{&node.agent, scheduler_, identity, client_, timeouts_});
  return success();
}

void live_run::wait_for_helpers() {
  // Data loading and evaluation run on the agents' helper threads; nothing else runs until
  // they are done, so their messages come in the same order every time.
  for (;;) {
    bool busy = false;
    for (const auto& node : nodes_)
      busy |= node->system->detached_actors() > 0;
    if (!busy)
      return;
    std::this_thread::sleep_for(100us);
  }
}

void live_run::send_jobs_home() {
  // CAF's test coordinator queues an actor that another system's actor woke on the waker's
  // coordinator, where it would run as part of the wrong machine: a node's relay woken by its
  // mesh parent's message never ran again once that parent hung (#40's silent interior loss).
  // Each job goes back to its own system's queue, which runs as its machine does.
  for (const auto& node : nodes_) {
    auto& jobs = coordinator(*node->system).jobs;
    for (auto job = jobs.begin(); job != jobs.end();) {
      auto* actor = dynamic_cast<caf::abstract_actor*>(*job);
      if (actor == nullptr || &actor->home_system() == node->system.get()) {
        ++job;
        continue;
      }
      coordinator(actor->home_system()).jobs.push_back(*job);
      job = jobs.erase(job);
    }
  }
}

bool live_run::run_one() {
  std::vector<live_node*> ready;
  for (const auto& node : nodes_)
    if (runs(*node) && node->busy_until <= now_ && coordinator(*node->system).has_job())
      ready.push_back(node.get());
  if (ready.empty())
    return false;
  auto* node = ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(random_)];
  coordinator(*node->system).run_once();
  send_jobs_home();
  wait_for_helpers();
  if (node->meter) {
    node->busy_until = now_ + node->meter->take();
    note_resumed();
  }
  return true;
}

void live_run::advance_to(time_point t) {
  now_ = t;
  for (const auto& node : nodes_) {
    auto& clock = coordinator(*node->system).clock();
    if (clock.current_time < now_)
      clock.advance_time(now_ - clock.current_time);
  }
}

std::optional<time_point> live_run::next_wakeup() const {
  std::optional<time_point> next = network_.next_arrival();
  const auto consider = [&](time_point t) {
    if (t > now_ && (!next || t < *next))
      next = t;
  };
  for (const auto& node : nodes_) {
    if (!runs(*node))
      continue;
    auto& sched = coordinator(*node->system);
    if (const auto& timers = sched.clock().schedule(); !timers.empty())
      consider(timers.begin()->first);
    if (sched.has_job())
      consider(node->busy_until);
  }
  for (std::size_t i = 0; i < s_.events.size(); ++i)
    if (fired_at_[i] < 0 && s_.events[i].at.at == moment::unit::seconds && training())
      consider(job_start_ + to_timespan(s_.events[i].at.value));
  if (next && *next < now_)
    next = now_;
  return next;
}

live_node* live_run::node_named(const std::string& name) {
  // The newest of that name: a restarted node is a new one.
  for (auto node = nodes_.rbegin(); node != nodes_.rend(); ++node)
    if ((*node)->model.name == name)
      return node->get();
  return nullptr;
}

std::vector<std::size_t> live_run::endpoints_of(const std::vector<std::string>& names) {
  std::vector<std::size_t> out;
  for (const auto& name : names)
    for (const auto& node : nodes_)
      if (node->model.name == name)
        out.push_back(node->endpoint);
  return out;
}

void live_run::fire(const scenario_event& e) {
  trace_.add(trace_line{{"t", now_.time_since_epoch().count()},
                        {"event", to_string(e.kind)},
                        {"field", e.field},
                        {"node", e.node},
                        {"job_steps", job_steps_}}
               .dump());
  auto* node = e.node.empty() ? nullptr : node_named(e.node);
  const auto at = seconds_of(now_ - job_start_);
  switch (e.kind) {
    case event_kind::kill:
      if (!node || node->dead)
        break;
      node->dead = true;
      if (e.silent)
        node->frozen = true;  // the machine vanished: nothing of it runs or answers
      else
        caf::anon_send_exit(node->agent, caf::exit_reason::remote_link_unreachable);
      faults_.push_back({"kill", e.node, at, -1, -1, -1});
      break;
    case event_kind::hang:
      if (node)
        node->frozen = true;
      faults_.push_back({"hang", e.node, at, -1, -1, -1});
      break;
    case event_kind::resume:
      if (node && !node->dead)
        node->frozen = false;
      break;
    case event_kind::restart:
    case event_kind::join: {
      auto model = e.kind == event_kind::join ? e.joining : node ? node->model : node_model{};
      if (e.kind == event_kind::restart) {
        if (!node)
          break;
        // A process that still runs (a resumed node that was told it was dropped, say) is
        // ended first, as a supervisor's restart would.
        if (!node->dead)
          caf::anon_send_exit(node->agent, caf::exit_reason::user_shutdown);
        node->dead = true;
        node->frozen = false;
      }
      faults_.push_back({to_string(e.kind), model.name, at, -1, -1, -1});
      if (auto started = start_node(std::move(model)); !started)
        trace_.add(trace_line{{"t", now_.time_since_epoch().count()},
                              {"refused", started.err().message}}
                       .dump());
      break;
    }
    case event_kind::slow_down:
      if (node && node->meter)
        node->meter->slow_down(e.factor);
      break;
    case event_kind::partition:
      // The scheduler stays with the first group; nodes named in no group stay with it too.
      for (std::size_t g = 1; g < e.groups.size(); ++g)
        for (const auto& name : e.groups[g])
          if (auto* member = node_named(name); member && !member->dead) {
            member->cut_off = true;
            faults_.push_back({"partition", name, at, -1, -1, -1});
          }
      break;
    case event_kind::heal:
      for (const auto& member : nodes_)
        member->cut_off = false;
      break;
    case event_kind::frame_fault:
      network_.add_fault(e, endpoints_of(e.from), endpoints_of(e.to),
                         e.until_seconds > 0 ? job_start_ + to_timespan(e.until_seconds)
                                             : time_point::max());
      break;
    case event_kind::scheduler_kill:
      if (!*scheduler_)
        break;
      // Its process dies: its job masters, hubs and heartbeat monitors with it (linked).
      caf::anon_send_exit(*scheduler_, caf::exit_reason::kill);
      *scheduler_ = nullptr;
      resuming_ = faults_.size();
      steps_at_kill_ = job_steps_;
      faults_.push_back({"schedulerKill", "", at, -1, -1, -1});
      break;
    case event_kind::scheduler_restart:
      if (!*scheduler_)
        start_scheduler();
      break;
  }
}

void live_run::fire_due_events() {
  if (!training())
    return;
  if (job_start_ == time_point{})
    job_start_ = sampled_ = now_;
  for (std::size_t i = 0; i < s_.events.size(); ++i) {
    if (fired_at_[i] >= 0)
      continue;
    const auto& at = s_.events[i].at;
    const bool due =
      at.at == moment::unit::step      ? static_cast<double>(job_steps_) + 1 >= at.value
      : at.at == moment::unit::epoch   ? log_.epochs_done + 1 >= at.value
                                       : now_ >= job_start_ + to_timespan(at.value);
    if (due) {
      fired_at_[i] = seconds_of(now_ - job_start_);
      fire(s_.events[i]);
    }
  }
}

std::uint32_t live_run::epochs_to_run() const {
  if (s_.steps == 0)
    return static_cast<std::uint32_t>(s_.epochs);  // 0: the job's own
  // The product trains whole epochs: as many as hold `steps` steps of every worker.
  std::uint64_t workers = 0;
  for (const auto& node : s_.nodes)
    workers += node.server ? 0 : node.workers;
  const auto per_epoch = steps_per_epoch(*s_.costs, workers);
  const auto epochs = static_cast<std::uint32_t>((s_.steps + per_epoch - 1) / per_epoch);
  trace_.add(
    trace_line{{"steps", s_.steps}, {"epochs", epochs}, {"steps_per_epoch", per_epoch}}.dump());
  return epochs;
}

void live_run::start_scheduler() {
  auto setup = scheduler_setup_;
  if (store_) {
    setup.store = store_;
    setup.restored = store_->record();
  }
  *scheduler_ = home().spawn(actors::scheduler, setup);
  if (client_ && log_.job_id > 0)
    caf::anon_send(client_, actors::attach_atom_v, *scheduler_);
}

void live_run::note_resumed() {
  // The first step after a scheduler's kill ends its fault: the job runs again.
  if (resuming_ && *scheduler_ && job_steps_ > steps_at_kill_) {
    faults_[*resuming_].restored_after = seconds_of(now_ - job_start_) - faults_[*resuming_].at;
    resuming_.reset();
  }
}

void live_run::sample_rates() {
  if (!training() || now_ - sampled_ < rate_interval)
    return;
  const double span = seconds_of(now_ - sampled_);
  const auto batch = static_cast<double>(s_.costs->batch_size);
  for (const auto& node : nodes_)
    if (node->meter && !node->dead) {
      const auto steps = node->meter->steps();
      node->rate.push_back({seconds_of(now_ - job_start_),
                            static_cast<double>(steps - node->sampled_steps) * batch / span});
      node->sampled_steps = steps;
    }
  sampled_ = now_;
}

void live_run::shut_down() {
  for (const auto& node : nodes_) {
    node->frozen = node->cut_off = false;
    node->busy_until = now_;
    for (const auto& actor : {node->daemon, node->agent})
      if (actor)
        caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }
  if (*scheduler_)
    caf::anon_send_exit(*scheduler_, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(client_, caf::exit_reason::user_shutdown);
  network_.close();
  // Let every actor end; timers of ended actors may still fire once.
  for (int rounds = 0; rounds < 1000; ++rounds) {
    bool any = false;
    for (const auto& node : nodes_) {
      auto& sched = coordinator(*node->system);
      any |= sched.run() > 0;
      any |= sched.trigger_timeouts() > 0;
      wait_for_helpers();
    }
    any |= network_.deliver_arrived();
    if (!any)
      break;
  }
  *scheduler_ = client_ = nullptr;
  for (auto& node : nodes_)
    node->agent = node->daemon = nullptr;
  while (!nodes_.empty()) {
    nodes_.back()->system->await_actors_before_shutdown(false);
    nodes_.pop_back();
  }
}

result<model_outcome> live_run::run() {
  if (auto ok = require_live_costs(s_); !ok)
    return ok.err();
  if (network_.tls().on)
    if (auto ok = require_tls_costs(s_); !ok)
      return ok.err();
  timeouts_.heartbeat_interval = to_timespan(s_.heartbeat_interval_seconds);
  timeouts_.heartbeat_timeout = to_timespan(s_.heartbeat_timeout_seconds);
  timeouts_.park_spin = caf::timespan::zero();
  fired_at_.assign(s_.events.size(), -1.0);
  // The scheduler's machine: the scheduler, its job masters and the plain topology's hub.
  auto& master = start_system(node_model{"scheduler", 1, 0, s_.nodes.front().link});
  auto& setup = scheduler_setup_;
  setup.admission_token = sim_token;
  setup.timeouts = timeouts_;
  setup.place = place_job;
  setup.reach_relay = [this, endpoint = master.endpoint](const caf::actor& peer) {
    return network_.reach(endpoint, peer);
  };
  if (std::any_of(s_.events.begin(), s_.events.end(),
                  [](const auto& e) { return e.kind == event_kind::scheduler_kill; }))
    store_ = std::make_shared<memory_store>();
  start_scheduler();
  auto job = *s_.job;
  local_training_options options;
  if (auto epochs = epochs_to_run(); epochs > 0)
    options.epochs = epochs;
  options.seed = seed_;
  options.topology = s_.topology.kind;
  options.fanout = s_.topology.fanout;
  const auto servers = static_cast<std::uint32_t>(
    std::count_if(s_.nodes.begin(), s_.nodes.end(), [](const auto& n) { return n.server; }));
  const auto workers = static_cast<std::uint32_t>(s_.nodes.size()) - servers;
  auto submission = make_submission(job, options, workers, servers);
  if (!submission)
    return submission.err();
  // Room for the worker nodes that join while it runs (strom submit --max-nodes).
  submission->max_nodes = static_cast<std::uint32_t>(
    workers + std::count_if(s_.events.begin(), s_.events.end(), [](const auto& e) {
      return e.kind == event_kind::join && !e.joining.server;
    }));
  client_ = home().spawn(live_client, *scheduler_, std::move(*submission), s_.nodes.size(),
                         &log_, &trace_, observer_, timeouts_.answer_timeout);
  for (const auto& model : s_.nodes)
    if (auto started = start_node(model); !started)
      return started.err();
  while (!log_.finished && !log_.refused) {
    network_.deliver_arrived();
    fire_due_events();
    sample_rates();
    if (run_one())
      continue;
    auto next = next_wakeup();
    if (!next || *next - job_start_ > virtual_time_limit) {
      if (!*scheduler_ && resuming_) {
        // The scheduler never came back: its job_master, and with it the job, is gone. The
        // run ends as `strom submit` would, failed, its report lost with the scheduler.
        log_.finished = actors::job_finished{
          log_.job_id, false, false,
          fmt::format("the scheduler was killed at {:.3f} s and never came back; the nodes "
                      "stopped waiting for it at {:.3f} s",
                      faults_[*resuming_].at, seconds_of(now_ - job_start_)),
          {}};
        break;
      }
      shut_down();
      return error{fmt::format("{}: the live run came to a standstill after {:.3f} virtual "
                               "seconds: nothing left to run, no timer, nothing in flight",
                               s_.source, seconds_of(now_.time_since_epoch()))};
    }
    advance_to(*next);
  }
  if (log_.refused) {
    shut_down();
    return error{fmt::format("{}: the scheduler refused the job: {}", s_.source, log_.refusal)};
  }
  auto out = outcome();
  shut_down();
  return out;
}

model_outcome live_run::outcome() const {
  model_outcome m;
  const auto& done = *log_.finished;
  const auto& r = done.report;
  m.completed = done.succeeded;
  m.failure = done.failure;
  m.simulated_seconds = seconds_of(now_ - job_start_);
  m.events_fired_at = fired_at_;
  m.samples_trained = r.train_samples;
  m.samples_redone = r.samples_redone;
  m.samples_per_second = r.train_samples_per_second;
  m.workers = r.workers;
  m.single_worker_samples_per_second = single_worker_samples_per_second(*s_.costs);
  if (m.workers > 0 && m.single_worker_samples_per_second > 0)
    m.scaling_efficiency = m.samples_per_second / (m.workers * m.single_worker_samples_per_second);
  m.topology = r.topology.kind;
  m.fanout = r.topology.fanout;
  m.topology_version = r.topology.version;
  m.max_links = r.topology.max_links;
  m.root.name = "scheduler";
  for (const auto& link : network_.links()) {
    const auto& from = network_.endpoint(link.from).name;
    const auto& to = network_.endpoint(link.to).name;
    m.links.push_back({from, to, link.bytes});
    m.frames_sent += link.frames;
  }
  for (const auto& node : nodes_) {
    if (!node->meter)
      continue;
    model_node_figures figures{node->model.name, node->model.workers,
                               node->model.speed_factor, 1, 0, 0,
                               node->meter->steps() / node->model.workers, node->dead,
                               node->rate};
    for (const auto& link : network_.links()) {
      if (link.from == node->endpoint)
        figures.bytes_out += link.bytes;
      if (link.to == node->endpoint)
        figures.bytes_in += link.bytes;
    }
    m.nodes.push_back(std::move(figures));
  }
  // The job's own figures: the longest detection and restore it measured.
  m.faults = faults_;
  for (auto& f : m.faults) {
    if (f.event == "kill" || f.event == "hang" || f.event == "partition")
      f.detected_after = r.nodes_lost > 0 ? r.failure_detection_seconds : -1;
    if (f.event == "join" || f.event == "restart")
      f.restored_after = r.nodes_restored + r.nodes_joined > 0 ? r.restore_seconds : -1;
  }
  m.duplicates_dropped = r.duplicate_updates_dropped;
  m.duplicates_applied = r.duplicate_updates_applied;
  m.frames_rejected = r.frames_rejected;
  m.test_accuracy = r.test_accuracy;
  m.scheduler_restarts = r.scheduler_restarts;
  m.server_failovers = r.server_failovers;
  m.frame_faults = network_.faults();
  m.tls = network_.tls();
  for (const auto& [at, summary] : log_.epochs) {
    m.train_loss.push_back({seconds_of(at - job_start_), summary.train_loss});
    if (summary.test_accuracy >= 0)
      m.epoch_accuracy.push_back({seconds_of(at - job_start_), summary.test_accuracy});
  }
  return m;
}

} // namespace

result<model_outcome> run_live(const scenario& s, std::uint64_t seed, sim_trace& trace,
                               training_observer* observer, const tls_context* tls) {
  live_run run{s, seed, trace, observer, tls};
  return run.run();
}

} // namespace strom::runtime::sim
