#pragma once
// The model mode's run (model.hpp): a discrete-event simulation of the job's nodes, steps,
// frames and faults on the scenario's links. One class whose members are defined in two files:
// model.cpp (set-up, steps, frames, the event loop) and model_faults.cpp (the scenario's
// scripted events, losses, detection, joins). Internal to those files.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <unordered_map>

#include "strom/actors/sharing/topology.hpp"
#include "strom/runtime/sim/model/model.hpp"
#include "strom/runtime/sim/tls_pipe.hpp"

namespace strom::runtime::sim::model_detail {

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
  /// Events at an epoch: the node step that starts it, the event's index; ascending.
  std::vector<std::pair<std::uint64_t, std::size_t>> epoch_events_;
  std::size_t next_epoch_event_ = 0;
  std::uint64_t job_step_ = 0;       ///< the highest step any node started
  /// Events at a step: the job's step (its workers' steps together), the index; ascending.
  std::vector<std::pair<std::uint64_t, std::size_t>> worker_step_events_;
  std::size_t next_worker_step_event_ = 0;
  std::uint64_t worker_steps_started_ = 0;  ///< by every worker together, redone ones too
  std::uint64_t steps_per_epoch_ = 1;
  std::uint64_t target_samples_ = 0;
  std::uint64_t next_epoch_step_ = 0;
  std::size_t at_epoch_end_ = 0;     ///< members whose done reached next_epoch_step_
  std::uint64_t checkpoint_samples_ = 0;
  std::uint64_t checkpoint_step_ = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> link_bytes_;
  model_outcome out_;
};

} // namespace strom::runtime::sim::model_detail
