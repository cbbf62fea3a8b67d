#pragma once
// Model mode: a discrete-event model of strom's gradient sharing, fed by a scenario and the
// costs of one step (calibrated or given). What it models, and how (the why of each choice
// is beside its code in model.cpp):
//   - each node's workers compute a step in step_seconds / speed, then encode their updates,
//     decode every other worker's frame (strom: a worker decodes every frame but its own,
//     which it applied at once; Deeplearning4j: every frame) and pay the other overhead;
//   - frames travel the topology the product plans (actors::plan_topology, without_node,
//     with_node): plain through the hub relay on the scheduler, mesh along the tree. A
//     node's frames of one step cross each hop as one message; each node's sending is a FIFO
//     at its link's bandwidth, each hop adds the link's latency, a relay passes on what it
//     receives as it arrives (cut-through);
//   - a node starts step j + 1 once it holds every node's frames of step j - staleness, and of
//     the epoch's last step at an epoch's end (the trainers' may_step and drain markers);
//   - faults as the product meets them: a kill is seen at once (down message) or after the
//     heartbeat timeout (silent), a remap follows, a join waits for the round under way and a
//     snapshot, a scheduler restart resumes from the last epoch's checkpoint.
// Symmetric nodes are not merged: every node keeps its own bytes and links, and the event
// loop costs about three events per node and step.

#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/result.hpp"
#include "strom/runtime/sim/scenario.hpp"
#include "strom/runtime/sim/sim_trace.hpp"

namespace strom::runtime::sim {

/// One point of a series over the job's simulated time.
struct timed_value {
  double at = 0;  ///< seconds since the job started
  double value = 0;
};

/// One node's figures at the end.
struct model_node_figures {
  std::string name;
  std::uint32_t workers = 0;
  double speed_factor = 1;
  std::size_t links = 0;       ///< neighbours in the last plan it was in
  std::uint64_t bytes_out = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t steps = 0;     ///< steps its workers completed (each)
  bool lost = false;
  std::vector<timed_value> samples_per_second;  ///< live mode: over time
};

/// Bytes that crossed one hop, in one direction.
struct model_link_figures {
  std::string from;
  std::string to;
  std::uint64_t bytes = 0;
};

/// One fault and how the job met it; times in seconds after the fault (-1: did not happen).
struct model_fault {
  std::string event;        ///< "kill", "hang", "partition", "join", ...
  std::string node;
  double at = 0;            ///< simulated time of the event
  double detected_after = -1;
  double remapped_after = -1;
  double restored_after = -1;  ///< join or restart: until it trained; scheduler: until resumed
};

/// What the links did to frames (live mode counts each; the model draws them per step).
struct frame_fault_counts {
  std::uint64_t dropped = 0;     ///< and sent again by TCP, late
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;
  std::uint64_t delayed = 0;     ///< by a delay fault or a lossy link's retransmission
  std::uint64_t corrupted = 0;
};

/// What a model run predicts.
/// TLS on the links (strom sim --tls-*).
struct tls_figures {
  bool on = false;
  std::uint64_t links = 0;            ///< live mode: connections made, each a handshake
  std::uint64_t handshake_bytes = 0;  ///< live mode: what their handshakes moved
  std::uint64_t failures = 0;         ///< live mode: handshakes, seals or opens that failed
};

struct model_outcome {
  bool completed = false;
  std::string failure;                 ///< why the job failed, when it did
  double simulated_seconds = 0;
  std::uint64_t samples_trained = 0;
  std::uint64_t samples_redone = 0;
  double samples_per_second = 0;
  double single_worker_samples_per_second = 0;  ///< one worker alone at speed 1: plain steps
  double scaling_efficiency = 0;       ///< samples_per_second / (workers * single worker's)
  std::uint32_t workers = 0;           ///< at the start
  double step_period_seconds = 0;      ///< one worker's step with sharing costs, at speed 1
  std::string topology;                ///< "plain" or "mesh" (auto resolved)
  std::uint32_t fanout = 0;
  std::uint64_t topology_version = 1;
  std::size_t max_links = 0;
  model_node_figures root;             ///< the hub (plain) or the tree's root (mesh)
  std::vector<model_node_figures> nodes;
  std::vector<model_link_figures> links;
  std::vector<model_fault> faults;
  std::uint64_t frames_sent = 0;
  std::uint64_t duplicates_dropped = 0;  ///< duplicated frames the relays dropped
  std::uint64_t duplicates_applied = 0;  ///< always 0: relays de-duplicate by sequence
  std::uint64_t frames_rejected = 0;     ///< corrupted frames refused (their updates lost)
  std::uint64_t events = 0;              ///< events the loop processed
  /// When each of the scenario's events fired, in seconds since the job started; -1: never.
  std::vector<double> events_fired_at;
  std::uint32_t scheduler_restarts = 0;  ///< the scheduler's restarts the job went through
  std::uint32_t server_failovers = 0;    ///< live mode: parameter servers lost and replaced
  frame_fault_counts frame_faults;       ///< live mode
  tls_figures tls;
  double test_accuracy = -1;             ///< live mode: the job's (-1: none, or model mode)
  std::vector<timed_value> train_loss;     ///< live mode: at each epoch's end
  std::vector<timed_value> epoch_accuracy; ///< live mode: test accuracy at each epoch's end
};

/// Runs the model of `s` (whose costs must be set) with `seed` for the random draws (frame
/// losses and faults); every event goes to `trace`.
/// With `tls`, the links carry TLS records, sealed and opened at the costs' TLS rates.
result<model_outcome> run_model(const scenario& s, assumptions assumed, std::uint64_t seed,
                                sim_trace& trace, bool tls = false);

} // namespace strom::runtime::sim
