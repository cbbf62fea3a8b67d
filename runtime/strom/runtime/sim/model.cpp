#include "strom/runtime/sim/model.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <unordered_map>

#include "strom/actors/timing.hpp"
#include "strom/actors/topology.hpp"
#include "strom/runtime/sim/failure_timing.hpp"
#include "strom/runtime/sim/tls_pipe.hpp"

namespace strom::runtime::sim {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

/// A lost frame is sent again after TCP's minimum retransmission timeout on Linux
/// (TCP_RTO_MIN, 200 ms): CAF's links are TCP connections.
constexpr double retransmit_seconds = 0.2;

/// Hops a remap takes: the job_master tells the relays and trainers (one hop); in a mesh each
/// new edge's relays then connect (a round trip) before passing on the round's frames.
constexpr double plain_remap_hops = 1;
constexpr double mesh_remap_hops = 3;

/// A joining node connects (a round trip) and is wired to its relay (another) before its
/// snapshot comes.
constexpr double join_wiring_hops = 4;

/// Bytes of a float: parameters and updater state travel as fp32 in snapshots.
constexpr double bytes_per_float = 4;

/// "No frames from this neighbour yet" in a step record.
constexpr std::uint64_t not_received = std::numeric_limits<std::uint64_t>::max();

enum class event_type : std::uint8_t {
  step_end,          ///< node finished computing a step (token: its step token)
  arrival,           ///< a step's frames reached `node` from `peer`
  scripted,          ///< the scenario's event number `step`
  detection,         ///< the scheduler finds `node` lost (token: its detection token)
  remap_done,        ///< the job_master's new plan is wired
  join_ready,        ///< joining nodes hold their snapshot
  scheduler_resumed, ///< nodes are back with the scheduler's checkpoint
  scheduler_gone,    ///< nodes gave up on the scheduler (token: its down token)
};

struct queued_event {
  double time = 0;
  std::uint64_t sequence = 0;  ///< ties broken by insertion order: determinism
  event_type type = event_type::step_end;
  std::uint32_t node = 0;
  std::uint32_t peer = 0;
  std::uint64_t step = 0;
  std::uint64_t token = 0;     ///< a token, or a message's plan version
  std::uint64_t bytes = 0;
  double first = 0;            ///< a message's first byte's arrival

  bool operator>(const queued_event& other) const {
    return time != other.time ? time > other.time : sequence > other.sequence;
  }
};

/// What one node has of one step's frames, and where it has passed them.
struct step_record {
  bool own = false;                   ///< this node's own frames of the step exist
  bool complete = false;              ///< every origin's frames are here
  std::uint32_t received = 0;         ///< neighbours whose message arrived
  std::uint32_t sent_count = 0;
  std::uint64_t bytes = 0;            ///< own and received
  double first = infinity;            ///< earliest component's first byte
  double last = -infinity;            ///< latest component's last byte, and from which slot
  std::int64_t last_slot = -2;
  double second_last = -infinity;     ///< the latest but one (a message excludes its target)
  std::vector<std::uint64_t> in_bytes;  ///< per neighbour slot
  std::vector<char> sent;
};

struct node_state {
  node_model spec;
  bool origin = true;       ///< false for the hub
  bool member = false;      ///< trains in the job now
  bool alive = false;       ///< its process runs
  bool hung = false;
  bool lost = false;
  bool computing = false;
  double speed = 1;
  double step_end = 0;
  double remaining = 0;     ///< a hung node's unfinished step time
  std::uint64_t step_token = 0;
  std::uint64_t detection_token = 0;
  double detection_time = infinity;
  std::uint64_t done = 0;   ///< steps completed
  std::uint64_t complete_through = 0;  ///< every step up to this one has all its frames here
  double egress_free = 0;
  std::uint64_t bytes_out = 0, bytes_in = 0;
  int group = 0;            ///< partition group; the scheduler's is 0
  std::vector<std::uint32_t> neighbours;
  std::unordered_map<std::uint32_t, std::uint32_t> slot_of;
  std::map<std::uint64_t, step_record> records;
  std::vector<queued_event> deferred;  ///< arrivals while hung
};

/// The fields of a trace line after its time and event name (ordered as written).
using trace_fields = nlohmann::ordered_json;

struct active_fault {
  frame_fault_kind kind;
  std::vector<std::uint32_t> from, to;
  double rate, delay, until;
};


class model_run {
public:
  model_run(const scenario& s, assumptions assumed, std::uint64_t seed, sim_trace& trace,
            bool tls)
    : s_(s), costs_(*s.costs), assumed_(assumed), tls_(tls), random_(seed), trace_(trace) {
    out_.tls.on = tls;
  }

  result<model_outcome> run();

private:
  // -- setup and plan ------------------------------------------------------------------------
  result<void> set_up();
  void rebuild_links();
  bool is_hub(std::uint32_t i) const { return has_hub_ && i == hub_; }
  /// Workers of the nodes training now (kept: asked at every step of every node).
  std::uint32_t member_workers() const { return member_workers_; }
  void count_member_workers();
  bool shares() const { return member_workers() > 1; }
  bool network() const { return assumed_ == assumptions::strom && shares(); }
  double hop_latency(std::uint32_t a, std::uint32_t b) const {
    return (nodes_[a].spec.link.latency_seconds + nodes_[b].spec.link.latency_seconds) / 2;
  }
  double latency_to_scheduler(std::uint32_t a) const { return hop_latency(a, hub_); }
  /// Frames in a message of `bytes` (messages carry whole frames of costs_.frame_bytes).
  std::uint64_t frames_in(std::uint64_t bytes) const {
    return std::max<std::uint64_t>(1, costs_.frame_bytes > 0 ? bytes / costs_.frame_bytes : 1);
  }
  /// What a message of `bytes` takes on a link: with TLS, each frame in its records.
  std::uint64_t on_wire(std::uint64_t bytes) const {
    if (!tls_)
      return bytes;
    return bytes + frames_in(bytes) * (tls_wire_bytes(costs_.frame_bytes) - costs_.frame_bytes);
  }
  double sealing_seconds(std::uint64_t bytes) const {
    return tls_ ? static_cast<double>(bytes) / costs_.tls_seal_bytes_per_second : 0;
  }
  double opening_seconds(std::uint64_t bytes) const {
    return tls_ ? static_cast<double>(bytes) / costs_.tls_open_bytes_per_second : 0;
  }

  // -- the event queue -----------------------------------------------------------------------
  void push(queued_event e) {
    e.sequence = sequence_++;
    queue_.push(e);
  }
  void handle(const queued_event& e);

  // -- steps ---------------------------------------------------------------------------------
  double step_duration(const node_state& n) const;
  void try_start(std::uint32_t a);
  void on_step_end(std::uint32_t a);
  void note_epoch_progress(std::uint32_t a);
  void recount_epoch_end();

  // -- frames --------------------------------------------------------------------------------
  step_record& record_of(std::uint32_t a, std::uint64_t step);
  void on_component(std::uint32_t a, std::uint64_t step, std::int64_t slot, std::uint64_t bytes,
                    double first, double last);
  void try_forward(std::uint32_t a, std::uint64_t step);
  void send(std::uint32_t a, std::uint32_t b, std::uint64_t step, std::uint64_t bytes,
            double start, double finish, double ready);
  void on_arrival(const queued_event& e);
  void advance_complete(std::uint32_t a);
  void fence();

  // -- faults --------------------------------------------------------------------------------
  void scripted(const scenario_event& e);
  void schedule_detection(std::uint32_t a, double when);
  void on_detection(std::uint32_t a);
  void request_join(std::uint32_t a, const std::string& event);
  void check_join_ready();
  void on_join_ready();
  void lose_step_in_progress(std::uint32_t a);
  bool blocked(std::uint32_t a, std::uint32_t b) const {
    return partitioned_ && nodes_[a].group != nodes_[b].group;
  }
  double draw() { return static_cast<double>(random_() >> 11) * 0x1.0p-53; }
  bool any_of(double rate, std::uint64_t frames) {
    return rate > 0 && draw() < 1 - std::pow(1 - rate, static_cast<double>(frames));
  }
  model_fault& fault_for(const std::string& node, const char* event);
  void trace_event(const char* event, trace_fields fields = trace_fields::object());
  void fail(std::string why);

  // -- inputs --------------------------------------------------------------------------------
  const scenario& s_;
  const step_costs costs_;
  const assumptions assumed_;
  const bool tls_;  // links carry TLS records (strom sim --tls-*)
  std::mt19937_64 random_;
  sim_trace& trace_;

  // -- state ---------------------------------------------------------------------------------
  std::vector<node_state> nodes_;
  std::uint32_t member_workers_ = 0;
  std::size_t members_ = 0;
  std::unordered_map<std::string, std::uint32_t> index_of_;
  bool has_hub_ = false;
  std::uint32_t hub_ = 0;
  actors::topology_plan plan_;
  std::uint64_t version_ = 1;
  std::priority_queue<queued_event, std::vector<queued_event>, std::greater<>> queue_;
  std::uint64_t sequence_ = 0;
  double now_ = 0;
  bool done_ = false;
  bool paused_ = false;
  bool join_scheduled_ = false;
  std::vector<std::pair<std::uint32_t, double>> joining_;  ///< node, when it asked
  bool scheduler_up_ = true;
  double scheduler_down_since_ = 0;
  std::uint64_t scheduler_token_ = 0;
  bool partitioned_ = false;
  std::vector<queued_event> held_;   ///< arrivals across a partition
  std::vector<active_fault> frame_faults_;
  std::vector<std::pair<std::uint64_t, std::size_t>> step_events_;  ///< step, event index
  std::size_t next_step_event_ = 0;
  std::uint64_t job_step_ = 0;       ///< the highest step any node started
  std::uint64_t steps_per_epoch_ = 1;
  std::uint64_t target_samples_ = 0;
  std::uint64_t next_epoch_step_ = 0;
  std::size_t at_epoch_end_ = 0;     ///< members whose done reached next_epoch_step_
  std::uint64_t checkpoint_samples_ = 0;
  std::uint64_t checkpoint_step_ = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> link_bytes_;
  model_outcome out_;
};

void model_run::count_member_workers() {
  member_workers_ = 0;
  members_ = 0;
  for (const auto& n : nodes_)
    if (n.member) {
      member_workers_ += n.spec.workers;
      ++members_;
    }
}

result<void> model_run::set_up() {
  std::vector<std::uint64_t> ids;
  for (const auto& spec : s_.nodes) {
    index_of_[spec.name] = static_cast<std::uint32_t>(nodes_.size());
    node_state n;
    n.spec = spec;
    n.member = n.alive = true;
    n.speed = spec.speed_factor;
    nodes_.push_back(std::move(n));
    ids.push_back(nodes_.size());
  }
  // Nodes that join later exist from the start, outside the job, with no process yet.
  for (const auto& e : s_.events)
    if (e.kind == event_kind::join) {
      index_of_[e.joining.name] = static_cast<std::uint32_t>(nodes_.size());
      node_state n;
      n.spec = e.joining;
      n.speed = e.joining.speed_factor;
      nodes_.push_back(std::move(n));
    }
  auto plan = actors::plan_topology(ids, s_.topology);
  if (!plan)
    return error{fmt::format("{}: cluster: {}", s_.source, plan.err().message)};
  plan_ = std::move(*plan);
  // The plain topology's hub relay runs on the scheduler, with the cluster's first link.
  has_hub_ = plan_.kind == actors::topology_kind::plain;
  hub_ = static_cast<std::uint32_t>(nodes_.size());
  node_state hub;
  hub.spec = {"hub", 1.0, 0, s_.nodes.front().link};
  hub.origin = false;
  hub.alive = true;
  nodes_.push_back(std::move(hub));
  rebuild_links();
  count_member_workers();

  out_.workers = member_workers();
  steps_per_epoch_ = steps_per_epoch(costs_, out_.workers);
  target_samples_ = s_.steps > 0 ? s_.steps * out_.workers * costs_.batch_size
                                 : s_.epochs * costs_.samples_per_epoch;
  next_epoch_step_ = steps_per_epoch_;
  out_.single_worker_samples_per_second = single_worker_samples_per_second(costs_);
  node_state at_speed_one = nodes_.front();
  at_speed_one.speed = 1;
  out_.step_period_seconds = step_duration(at_speed_one);

  for (std::size_t i = 0; i < s_.events.size(); ++i) {
    const auto& at = s_.events[i].at;
    if (at.at == moment::unit::seconds)
      push({at.value, 0, event_type::scripted, 0, 0, i});
    else
      step_events_.emplace_back(at.at == moment::unit::step
                                  ? static_cast<std::uint64_t>(at.value)
                                  : (static_cast<std::uint64_t>(at.value) - 1) * steps_per_epoch_
                                      + 1,
                                i);
  }
  std::stable_sort(step_events_.begin(), step_events_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return success();
}

void model_run::rebuild_links() {
  for (auto& n : nodes_) {
    n.neighbours.clear();
    n.slot_of.clear();
  }
  auto link = [this](std::uint32_t a, std::uint32_t b) {
    nodes_[a].slot_of[b] = static_cast<std::uint32_t>(nodes_[a].neighbours.size());
    nodes_[a].neighbours.push_back(b);
  };
  if (has_hub_) {
    std::vector<std::uint32_t> members;
    for (std::uint32_t i = 0; i < hub_; ++i)
      if (nodes_[i].member)
        members.push_back(i);
    // A node alone needs no hub: its workers' frames stay on the node.
    if (members.size() > 1)
      for (auto m : members) {
        link(m, hub_);
        link(hub_, m);
      }
    out_.max_links = members.size() > 1 ? members.size() : 0;
  } else {
    for (const auto& [id, links] : plan_.links) {
      const auto a = static_cast<std::uint32_t>(id - 1);
      if (links.parent != 0)
        link(a, static_cast<std::uint32_t>(links.parent - 1));
      for (auto child : links.children)
        link(a, static_cast<std::uint32_t>(child - 1));
    }
    out_.max_links = actors::max_links(plan_);
  }
}

// -- steps -----------------------------------------------------------------------------------

double model_run::step_duration(const node_state& n) const {
  const double compute = costs_.step_seconds / n.speed;
  const std::uint32_t workers = member_workers();
  if (assumed_ == assumptions::deeplearning4j)
    // Deeplearning4j's form: every worker decodes every worker's update, its own included.
    return compute + costs_.encode_seconds + workers * costs_.decode_seconds
           + costs_.overhead_seconds;
  if (workers <= 1)
    return compute;  // a trainer alone in its round takes plain steps: no frames
  const std::uint32_t decoded = s_.apply_own_update ? workers - 1 : workers;
  return compute + costs_.encode_seconds + decoded * costs_.decode_seconds
         + costs_.overhead_seconds;
}

void model_run::try_start(std::uint32_t a) {
  auto& n = nodes_[a];
  if (done_ || paused_ || !n.member || !n.alive || n.hung || n.computing || !n.origin)
    return;
  const std::uint64_t c = n.done;
  if (network()) {
    // may_step: the (c + 1)-th update waits for every origin's first c - staleness; an
    // epoch's first step waits for the drain of the last (every frame of the epoch).
    const bool epoch_end = c > 0 && c % steps_per_epoch_ == 0;
    const std::uint64_t needed = epoch_end ? c : (c > s_.staleness ? c - s_.staleness : 0);
    if (needed > n.complete_through)
      return;
  }
  n.computing = true;
  n.step_end = now_ + step_duration(n);
  push({n.step_end, 0, event_type::step_end, a, 0, c + 1, ++n.step_token});
  if (c + 1 > job_step_) {
    job_step_ = c + 1;
    // Events at a step happen when the first node starts it.
    while (next_step_event_ < step_events_.size()
           && step_events_[next_step_event_].first <= job_step_)
      push({now_, 0, event_type::scripted, 0, 0, step_events_[next_step_event_++].second});
  }
}

void model_run::on_step_end(std::uint32_t a) {
  auto& n = nodes_[a];
  n.computing = false;
  ++n.done;
  out_.samples_trained += static_cast<std::uint64_t>(n.spec.workers) * costs_.batch_size;
  trace_event("step", {{"node", n.spec.name}, {"step", n.done}});
  note_epoch_progress(a);
  if (out_.samples_trained >= target_samples_) {
    done_ = true;
    out_.completed = true;
    return;
  }
  if (network()) {
    out_.frames_sent += n.spec.workers;
    on_component(a, n.done, -1, static_cast<std::uint64_t>(n.spec.workers) * costs_.frame_bytes,
                 now_, now_);
  } else {
    n.complete_through = n.done;
  }
  try_start(a);
}

void model_run::note_epoch_progress(std::uint32_t a) {
  if (nodes_[a].done != next_epoch_step_)
    return;
  if (++at_epoch_end_ < members_)
    return;
  // Every member finished the epoch: the checkpoint keeper saves it.
  checkpoint_samples_ = out_.samples_trained;
  checkpoint_step_ = next_epoch_step_;
  next_epoch_step_ += steps_per_epoch_;
  recount_epoch_end();
}

// -- frames ----------------------------------------------------------------------------------

step_record& model_run::record_of(std::uint32_t a, std::uint64_t step) {
  auto& n = nodes_[a];
  auto [it, created] = n.records.try_emplace(step);
  if (created) {
    it->second.in_bytes.assign(n.neighbours.size(), not_received);
    it->second.sent.assign(n.neighbours.size(), 0);
  }
  return it->second;
}

void model_run::on_component(std::uint32_t a, std::uint64_t step, std::int64_t slot,
                             std::uint64_t bytes, double first, double last) {
  auto& n = nodes_[a];
  if (n.origin && step <= n.complete_through)
    return;  // fenced: a remap took every frame of this step as delivered
  auto& r = record_of(a, step);
  if (slot < 0) {
    r.own = true;
  } else {
    if (r.in_bytes[slot] != not_received)
      return;
    r.in_bytes[slot] = bytes;
    ++r.received;
  }
  r.bytes += bytes;
  r.first = std::min(r.first, first);
  if (last >= r.last) {
    r.second_last = r.last;
    r.last = last;
    r.last_slot = slot;
  } else {
    r.second_last = std::max(r.second_last, last);
  }
  const bool completes =
    n.origin && r.own && r.received == n.neighbours.size() && !r.complete;
  if (completes)
    r.complete = true;
  try_forward(a, step);  // may erase the record
  if (completes)
    advance_complete(a);
}

void model_run::advance_complete(std::uint32_t a) {
  auto& n = nodes_[a];
  const auto before = n.complete_through;
  for (auto it = n.records.find(n.complete_through + 1);
       it != n.records.end() && it->first == n.complete_through + 1 && it->second.complete;
       it = n.records.find(n.complete_through + 1))
    ++n.complete_through;
  // A record is done with once complete and passed on everywhere.
  for (auto it = n.records.begin(); it != n.records.end() && it->first <= n.complete_through;)
    it = it->second.sent_count == n.neighbours.size() ? n.records.erase(it) : std::next(it);
  if (n.complete_through != before)
    try_start(a);
}

void model_run::try_forward(std::uint32_t a, std::uint64_t step) {
  auto& n = nodes_[a];
  if (!n.alive || n.hung || (is_hub(a) && !scheduler_up_))
    return;
  auto& r = record_of(a, step);
  const std::size_t degree = n.neighbours.size();
  if ((n.origin && !r.own) || r.received + 1 < degree)
    return;
  // A relay passes on what it has: to neighbour j goes everything but what came from j, once
  // all of that is here.
  std::vector<std::uint32_t> targets;
  for (std::uint32_t j = 0; j < degree; ++j)
    if (!r.sent[j] && (r.received == degree || r.in_bytes[j] == not_received))
      targets.push_back(j);
  if (targets.empty())
    return;
  double wire_total = 0;
  double sealing = 0;  // TLS: each neighbour's connection seals what it carries
  std::vector<std::uint64_t> sizes;
  for (auto j : targets) {
    sizes.push_back(r.bytes - (r.in_bytes[j] == not_received ? 0 : r.in_bytes[j]));
    const auto& link = n.spec.link;
    wire_total +=
      static_cast<double>(on_wire(sizes.back())) * (1 + link.duplication) / (1 - link.loss);
    sealing += sealing_seconds(sizes.back());
  }
  // The node's link sends the messages side by side (one FIFO, shared): all finish together.
  const double start = std::max(n.egress_free, r.first);
  const double finish = start + sealing + wire_total / n.spec.link.bytes_per_second;
  n.egress_free = finish;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const auto j = targets[t];
    r.sent[j] = 1;
    ++r.sent_count;
    // Cut-through: a message cannot end before the last of what it carries arrived.
    const double ready = static_cast<std::int64_t>(j) == r.last_slot ? r.second_last : r.last;
    send(a, n.neighbours[j], step, sizes[t], start, finish, ready);
  }
  // Done with: a relay's once passed on everywhere; a node's also once complete (which
  // advance_complete sees to).
  if (r.sent_count == degree && (!n.origin || (r.complete && step <= n.complete_through)))
    n.records.erase(step);
}

void model_run::send(std::uint32_t a, std::uint32_t b, std::uint64_t step, std::uint64_t bytes,
                     double start, double finish, double ready) {
  auto& from = nodes_[a];
  const auto& link = from.spec.link;
  const std::uint64_t frames = frames_in(bytes);
  const auto wire = static_cast<std::uint64_t>(
    std::llround(static_cast<double>(on_wire(bytes)) * (1 + link.duplication) / (1 - link.loss)));
  double delay = 0;
  if (any_of(link.loss, frames))
    delay += retransmit_seconds;
  out_.duplicates_dropped += static_cast<std::uint64_t>(
    std::llround(static_cast<double>(frames) * link.duplication));
  for (const auto& f : frame_faults_) {
    if (f.until > 0 && now_ >= f.until)
      continue;
    const bool from_ok = f.from.empty() || is_hub(a)
                         || std::find(f.from.begin(), f.from.end(), a) != f.from.end();
    const bool to_ok = f.to.empty() || is_hub(b)
                       || std::find(f.to.begin(), f.to.end(), b) != f.to.end();
    if (!from_ok || !to_ok)
      continue;
    switch (f.kind) {
      case frame_fault_kind::drop:
        // Nothing in strom sends a dropped frame again but the transport below it; the model
        // assumes it is (as TCP would), one retransmission timeout later. Live mode will say.
        if (any_of(f.rate, frames))
          delay += retransmit_seconds;
        break;
      case frame_fault_kind::corrupt:
        // The receivers refuse the frame and its update is lost: nothing sends it again, and
        // its header still moves its origin's clock (live mode showed both), so it costs no
        // time.
        if (any_of(f.rate, frames))
          ++out_.frames_rejected;
        break;
      case frame_fault_kind::delay:
        if (any_of(f.rate, frames))
          delay += f.delay;
        break;
      case frame_fault_kind::duplicate:
        out_.duplicates_dropped +=
          static_cast<std::uint64_t>(std::llround(static_cast<double>(frames) * f.rate));
        break;
      case frame_fault_kind::reorder:
        break;  // relays and trainers take frames in any order: no cost
    }
  }
  from.bytes_out += wire;
  link_bytes_[{a, b}] += wire;
  const double latency = hop_latency(a, b);
  const double last = std::max(finish, ready) + latency + delay + opening_seconds(bytes);
  push({last, 0, event_type::arrival, b, a, step, version_, bytes, start + latency});
}

void model_run::on_arrival(const queued_event& e) {
  auto& n = nodes_[e.node];
  if (e.token != version_ || !n.alive || (n.origin && !n.member))
    return;  // an older plan's message (the remap's repair stands for it), or nobody there
  if (blocked(e.peer, e.node)) {
    held_.push_back(e);
    return;
  }
  if (n.hung) {
    n.deferred.push_back(e);
    return;
  }
  n.bytes_in += e.bytes;
  const auto slot = n.slot_of.find(e.peer);
  if (slot == n.slot_of.end())
    return;
  on_component(e.node, e.step, slot->second, e.bytes, e.first, now_);
}

void model_run::fence() {
  // After a remap or a join every round up to the newest finished one counts as delivered:
  // the new edges' relays send each other what they passed (the product's repair), and a
  // joiner starts from a snapshot of it.
  std::uint64_t newest = 0;
  for (const auto& n : nodes_)
    if (n.member)
      newest = std::max(newest, n.done);
  for (auto& n : nodes_) {
    n.records.clear();
    n.complete_through = std::max(n.complete_through, newest);
  }
}

// -- faults ----------------------------------------------------------------------------------

model_fault& model_run::fault_for(const std::string& node, const char* event) {
  for (auto it = out_.faults.rbegin(); it != out_.faults.rend(); ++it)
    if (it->node == node && it->event == event)
      return *it;
  return out_.faults.emplace_back(model_fault{event, node, now_});
}

void model_run::trace_event(const char* event, trace_fields fields) {
  // Whole nanoseconds, as the live mode's clock counts: 0.78, not 0.7800000000000001.
  trace_fields line = {{"t", std::round(now_ * 1e9) / 1e9}, {"event", event}};
  for (auto& [key, value] : fields.items())
    line[key] = std::move(value);
  trace_.add(line.dump());
}

void model_run::fail(std::string why) {
  done_ = true;
  out_.completed = false;
  out_.failure = std::move(why);
  trace_event("failed", {{"why", out_.failure}});
}

void model_run::lose_step_in_progress(std::uint32_t a) {
  auto& n = nodes_[a];
  if (!n.computing)
    return;
  // Its workers' batches of the step under way never became frames: trained again.
  out_.samples_redone += static_cast<std::uint64_t>(n.spec.workers) * costs_.batch_size;
  n.computing = false;
  ++n.step_token;
}

void model_run::schedule_detection(std::uint32_t a, double when) {
  auto& n = nodes_[a];
  if (when >= n.detection_time)
    return;
  n.detection_time = when;
  push({when, 0, event_type::detection, a, 0, 0, ++n.detection_token});
}

void model_run::on_detection(std::uint32_t a) {
  auto& n = nodes_[a];
  if (!n.member)
    return;
  n.member = false;
  n.lost = true;
  n.detection_time = infinity;
  count_member_workers();
  lose_step_in_progress(a);
  for (auto& f : out_.faults)
    if (f.node == n.spec.name && f.detected_after < 0)
      f.detected_after = now_ - f.at;
  trace_event("lost", {{"node", n.spec.name}});
  auto without = actors::without_node(plan_, a + 1);
  if (!without) {
    fail(fmt::format("every node was lost (the last, {}, at {:.3f} s)", n.spec.name, now_));
    return;
  }
  plan_ = std::move(*without);
  recount_epoch_end();  // without the lost node
  const double hops = has_hub_ ? plain_remap_hops : mesh_remap_hops;
  push({now_ + hops * latency_to_scheduler(a), 0, event_type::remap_done});
}

void model_run::request_join(std::uint32_t a, const std::string& event) {
  auto& n = nodes_[a];
  n.alive = true;
  n.hung = false;
  n.lost = false;
  n.speed = n.spec.speed_factor;
  fault_for(n.spec.name, event.c_str());
  joining_.emplace_back(a, now_);
  // The running round is cut short after the step under way; nobody starts another.
  paused_ = true;
  check_join_ready();
}

void model_run::check_join_ready() {
  if (joining_.empty() || join_scheduled_ || !scheduler_up_)
    return;
  for (const auto& n : nodes_)
    if (n.member && n.alive && !n.hung && n.computing)
      return;
  // The snapshot (parameters and updater state) comes from a live node over the slower of
  // the two links, after the joiner connected and was wired.
  std::uint32_t donor = hub_;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].member && nodes_[i].alive && !nodes_[i].hung) {
      donor = i;
      break;
    }
  double ready = now_;
  for (const auto& [a, asked] : joining_) {
    const double bytes = static_cast<double>(costs_.parameters + costs_.updater_floats)
                         * bytes_per_float;
    const double bandwidth = std::min(nodes_[donor].spec.link.bytes_per_second,
                                      nodes_[a].spec.link.bytes_per_second);
    const double latency = hop_latency(a, donor);
    ready = std::max(ready, std::max(now_, asked + latency) + join_wiring_hops * latency
                              + bytes / bandwidth + latency);
  }
  join_scheduled_ = true;
  push({ready, 0, event_type::join_ready});
}

void model_run::on_join_ready() {
  join_scheduled_ = false;
  std::uint64_t newest = 0;
  for (const auto& n : nodes_)
    if (n.member)
      newest = std::max(newest, n.done);
  for (const auto& [a, asked] : joining_) {
    auto& n = nodes_[a];
    if (!n.alive)
      continue;
    auto with = actors::with_node(plan_, a + 1);
    if (!with)
      continue;  // still in the plan: cannot happen, as a node joins only once lost
    plan_ = std::move(*with);
    n.member = true;
    // It trains from the round after the snapshot, as the others do.
    n.done = newest;
    n.complete_through = newest;
    for (auto& f : out_.faults)
      if (f.node == n.spec.name && (f.event == "join" || f.event == "restart")
          && f.restored_after < 0)
        f.restored_after = now_ - asked;
    trace_event("restored", {{"node", n.spec.name}});
  }
  joining_.clear();
  count_member_workers();
  paused_ = false;
  ++version_;
  rebuild_links();
  fence();
  recount_epoch_end();
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    try_start(i);
}

void model_run::recount_epoch_end() {
  at_epoch_end_ = 0;
  for (const auto& m : nodes_)
    if (m.member && m.done >= next_epoch_step_)
      ++at_epoch_end_;
}

void model_run::scripted(const scenario_event& e) {
  const bool names_node = !e.node.empty();
  const std::uint32_t a = names_node ? index_of_.at(e.node) : 0;
  auto& n = nodes_[a];
  trace_event(to_string(e.kind),
              names_node ? trace_fields{{"node", e.node}} : trace_fields::object());
  switch (e.kind) {
    case event_kind::kill:
      if (!n.alive)
        return;
      n.alive = false;
      lose_step_in_progress(a);
      n.deferred.clear();
      if (n.member) {
        fault_for(e.node, "kill");
        // A process that dies closes its connections: the scheduler's down message comes one
        // hop later. A machine that vanishes answers no ping.
        schedule_detection(a, e.silent ? heartbeat_detection_time(
                                           now_, s_.heartbeat_interval_seconds,
                                           s_.heartbeat_timeout_seconds, latency_to_scheduler(a))
                                       : now_ + latency_to_scheduler(a));
      }
      return;
    case event_kind::hang:
      if (!n.alive || n.hung)
        return;
      n.hung = true;
      if (n.computing) {
        n.remaining = n.step_end - now_;
        ++n.step_token;
      }
      if (n.member) {
        fault_for(e.node, "hang");
        schedule_detection(a, heartbeat_detection_time(now_, s_.heartbeat_interval_seconds,
                                                       s_.heartbeat_timeout_seconds,
                                                       latency_to_scheduler(a)));
      }
      return;
    case event_kind::resume: {
      if (!n.hung)
        return;
      n.hung = false;
      if (!n.member) {
        // Dropped while it hung: told so when heard from, it stops and exits.
        n.alive = false;
        n.computing = false;
        trace_event("exits", {{"node", e.node}});
        return;
      }
      if (now_ + latency_to_scheduler(a) < n.detection_time) {
        n.detection_time = infinity;
        ++n.detection_token;  // its pong came in time
      }
      if (n.computing) {
        n.step_end = now_ + n.remaining;
        push({n.step_end, 0, event_type::step_end, a, 0, n.done + 1, ++n.step_token});
      }
      for (auto deferred : std::exchange(n.deferred, {})) {
        deferred.time = now_;
        push(deferred);
      }
      std::vector<std::uint64_t> steps;
      for (const auto& [step, record] : n.records)
        steps.push_back(step);
      for (auto step : steps)
        try_forward(a, step);
      try_start(a);
      return;
    }
    case event_kind::restart:
      if (n.alive)
        return;
      if (n.member)  // its old incarnation, not yet found lost, is dropped as it joins again
        on_detection(a);
      request_join(a, "restart");
      return;
    case event_kind::slow_down: {
      const double speed = n.spec.speed_factor / e.factor;
      if (n.computing && !n.hung) {
        // The rest of the step under way takes the new time.
        n.step_end = now_ + (n.step_end - now_) * n.speed / speed;
        push({n.step_end, 0, event_type::step_end, a, 0, n.done + 1, ++n.step_token});
      }
      n.speed = speed;
      return;
    }
    case event_kind::partition:
      partitioned_ = true;
      for (std::size_t g = 0; g < e.groups.size(); ++g)
        for (const auto& name : e.groups[g])
          nodes_[index_of_.at(name)].group = static_cast<int>(g);
      for (std::uint32_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].member && nodes_[i].group != 0) {
          fault_for(nodes_[i].spec.name, "partition");
          schedule_detection(i, heartbeat_detection_time(now_, s_.heartbeat_interval_seconds,
                                                         s_.heartbeat_timeout_seconds,
                                                         latency_to_scheduler(i)));
        }
      return;
    case event_kind::heal:
      if (!partitioned_)
        return;
      partitioned_ = false;
      for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
        auto& m = nodes_[i];
        if (m.group == 0)
          continue;
        m.group = 0;
        if (m.member && now_ + latency_to_scheduler(i) < m.detection_time && !m.hung) {
          m.detection_time = infinity;
          ++m.detection_token;
        } else if (!m.member && m.lost && m.alive) {
          m.alive = false;  // dropped while cut off: told so, it exits
          trace_event("exits", {{"node", m.spec.name}});
        }
      }
      for (auto held : std::exchange(held_, {})) {
        held.time = now_;
        push(held);
      }
      return;
    case event_kind::frame_fault: {
      active_fault f{e.fault, {}, {}, e.rate, e.delay_seconds, e.until_seconds};
      for (const auto& name : e.from)
        f.from.push_back(index_of_.at(name));
      for (const auto& name : e.to)
        f.to.push_back(index_of_.at(name));
      frame_faults_.push_back(std::move(f));
      return;
    }
    case event_kind::join:
      if (n.alive || n.member)
        return;
      request_join(a, "join");
      return;
    case event_kind::scheduler_kill:
      if (!scheduler_up_)
        return;
      scheduler_up_ = false;
      scheduler_down_since_ = now_;
      fault_for("scheduler", "schedulerKill");
      // The nodes' connections break: each stops its job; what was under way is lost.
      paused_ = true;
      for (std::uint32_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].member)
          lose_step_in_progress(i);
      push({now_ + std::chrono::duration<double>(actors::timing{}.reconnect_timeout).count(), 0,
            event_type::scheduler_gone, 0, 0, 0, ++scheduler_token_});
      return;
    case event_kind::scheduler_restart: {
      if (scheduler_up_)
        return;
      scheduler_up_ = true;
      ++out_.scheduler_restarts;
      // Nodes connect again with back-off, then each takes the checkpoint from the keeper on
      // the scheduler, one after another over its link.
      double back = 0;
      std::size_t members = 0;
      for (std::uint32_t i = 0; i < hub_; ++i)
        if (nodes_[i].member) {
          ++members;
          back = std::max(back, reconnect_time(scheduler_down_since_, now_,
                                               latency_to_scheduler(i)));
        }
      const double bytes = static_cast<double>(costs_.parameters + costs_.updater_floats)
                           * bytes_per_float * static_cast<double>(members);
      push({back + bytes / nodes_[hub_].spec.link.bytes_per_second, 0,
            event_type::scheduler_resumed, 0, 0, 0, scheduler_token_});
      return;
    }
  }
}

void model_run::handle(const queued_event& e) {
  switch (e.type) {
    case event_type::step_end:
      if (e.token == nodes_[e.node].step_token && nodes_[e.node].computing
          && nodes_[e.node].alive && !nodes_[e.node].hung)
        on_step_end(e.node);
      if (paused_)
        check_join_ready();
      return;
    case event_type::arrival: on_arrival(e); return;
    case event_type::scripted: scripted(s_.events[e.step]); return;
    case event_type::detection:
      if (e.token == nodes_[e.node].detection_token)
        on_detection(e.node);
      if (paused_)
        check_join_ready();
      return;
    case event_type::remap_done:
      ++version_;
      rebuild_links();
      fence();
      trace_event("remap", {{"version", plan_.version}});
      for (auto& f : out_.faults)
        if (f.detected_after >= 0 && f.remapped_after < 0)
          f.remapped_after = now_ - f.at - f.detected_after;
      for (std::uint32_t i = 0; i < nodes_.size(); ++i)
        try_start(i);
      return;
    case event_type::join_ready: on_join_ready(); return;
    case event_type::scheduler_resumed: {
      if (e.token != scheduler_token_ || done_)
        return;
      ++scheduler_token_;  // the nodes no longer give up
      // The job resumes from its last checkpoint: what was trained since is trained again.
      out_.samples_redone += out_.samples_trained - checkpoint_samples_;
      out_.samples_trained = checkpoint_samples_;
      for (auto& n : nodes_) {
        n.records.clear();
        if (n.member) {
          n.done = checkpoint_step_;
          n.complete_through = checkpoint_step_;
        }
      }
      next_epoch_step_ = checkpoint_step_ + steps_per_epoch_;
      at_epoch_end_ = 0;
      ++version_;
      rebuild_links();
      paused_ = !joining_.empty();
      for (auto& f : out_.faults)
        if (f.event == "schedulerKill" && f.restored_after < 0)
          f.restored_after = now_ - f.at;
      trace_event("resumed");
      for (std::uint32_t i = 0; i < nodes_.size(); ++i)
        try_start(i);
      check_join_ready();
      return;
    }
    case event_type::scheduler_gone:
      if (e.token == scheduler_token_)
        fail(fmt::format("the scheduler was not back within the nodes' reconnect timeout "
                         "(down since {:.3f} s)",
                         scheduler_down_since_));
      return;
  }
}

result<model_outcome> model_run::run() {
  if (auto ok = set_up(); !ok)
    return ok.err();
  out_.topology = actors::to_string(plan_.kind);
  out_.fanout = plan_.fanout;
  trace_event("start", {{"nodes", s_.nodes.size()},
                        {"workers", out_.workers},
                        {"topology", out_.topology},
                        {"fanout", out_.fanout},
                        {"assumptions",
                         assumed_ == assumptions::strom ? "strom" : "deeplearning4j"}});
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    try_start(i);
  while (!done_ && !queue_.empty()) {
    const auto e = queue_.top();
    queue_.pop();
    now_ = e.time;
    ++out_.events;
    handle(e);
  }
  if (!done_)
    fail("the job stalled: no node can step and nothing is under way");
  out_.simulated_seconds = now_;
  trace_event("end", {{"completed", out_.completed}, {"samples", out_.samples_trained}});
  if (out_.completed && now_ > 0)
    out_.samples_per_second = static_cast<double>(out_.samples_trained) / now_;
  out_.scaling_efficiency =
    out_.samples_per_second / (out_.workers * out_.single_worker_samples_per_second);
  out_.topology_version = plan_.version;
  auto figures = [](const node_state& n) {
    return model_node_figures{n.spec.name, n.spec.workers, n.spec.speed_factor,
                              n.neighbours.size(), n.bytes_out, n.bytes_in, n.done, n.lost,
                              {}};
  };
  for (const auto& n : nodes_)
    if (n.origin && (n.member || n.lost || n.done > 0))
      out_.nodes.push_back(figures(n));
  out_.root = figures(has_hub_ ? nodes_[hub_] : nodes_[plan_.root - 1]);
  for (const auto& [hop, bytes] : link_bytes_)
    out_.links.push_back({nodes_[hop.first].spec.name, nodes_[hop.second].spec.name, bytes});
  return out_;
}

} // namespace

result<model_outcome> run_model(const scenario& s, assumptions assumed, std::uint64_t seed,
                                sim_trace& trace, bool tls) {
  if (!s.costs)
    return error{fmt::format("{}: costs: model mode needs the costs of a step", s.source)};
  if (s.costs->batch_size == 0 || s.costs->step_seconds <= 0)
    return error{fmt::format("{}: costs: a batch size and a step time above 0 are needed",
                             s.source)};
  for (std::size_t i = 0; i < s.nodes.size(); ++i)
    if (s.nodes[i].server)
      return error{fmt::format("{}: cluster.nodes.list[{}].server: model mode does not model "
                               "parameter servers; run the scenario with --mode live",
                               s.source, i)};
  if (tls)
    if (auto ok = require_tls_costs(s); !ok)
      return ok.err();
  model_run run{s, assumed, seed, trace, tls};
  return run.run();
}

} // namespace strom::runtime::sim
