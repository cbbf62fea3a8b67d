#pragma once
// A simulation scenario (schema/scenario.capnp) read and checked into plain values: the
// cluster's nodes and links, the job, its length, the events and the expectations. Both modes
// run from this; every refusal names the file, the field path and the value.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strom/actors/sharing/topology.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/sim/step_costs.hpp"

namespace strom::runtime::sim {

/// A node's network link.
struct link_model {
  double latency_seconds = 0;
  double bytes_per_second = 0;
  double loss = 0;         ///< fraction of frames lost and sent again
  double duplication = 0;  ///< fraction delivered twice
  double reordering = 0;   ///< fraction overtaken by the next
};

/// One node of the cluster.
struct node_model {
  std::string name;
  double speed_factor = 1;
  std::uint32_t workers = 1;
  link_model link;
  bool server = false;  ///< holds a kvstore job's parameter shards instead of training
};

enum class sim_mode { live, model };

/// "live" or "model".
const char* to_string(sim_mode mode);
/// The mode named `text`; the error quotes it.
result<sim_mode> parse_sim_mode(std::string_view text);

/// When an event happens.
struct moment {
  enum class unit { step, epoch, seconds };
  unit at = unit::seconds;
  double value = 0;  ///< the step (1-based), the epoch (1-based: its start) or seconds
};

/// "step 300", "epoch 2" or "3.5 s", for messages and reports.
std::string to_string(const moment& at);

enum class event_kind {
  kill, hang, resume, restart, slow_down, partition, heal, frame_fault, join,
  scheduler_kill, scheduler_restart
};

/// The event's name as in scenario files ("kill", "slowDown", ...).
const char* to_string(event_kind kind);

enum class frame_fault_kind { drop, duplicate, reorder, delay, corrupt };

/// One scripted event; the fields its kind uses are set.
struct scenario_event {
  std::string field;  ///< "events[3]", for messages
  moment at;
  event_kind kind = event_kind::kill;
  std::string node;                            ///< kill, hang, resume, restart, slowDown
  bool silent = false;                         ///< kill: only heartbeats tell
  double factor = 1;                           ///< slowDown
  std::vector<std::vector<std::string>> groups;  ///< partition
  std::vector<std::string> from, to;           ///< frameFault (empty: any node)
  frame_fault_kind fault = frame_fault_kind::drop;
  double rate = 0, delay_seconds = 0, until_seconds = 0;  ///< frameFault
  node_model joining;                          ///< join
};

enum class expectation_kind {
  completes, fails, accuracy_at_least, nothing_applied_twice, detection_within,
  restore_within, samples_redone_at_most, samples_per_second_at_least, scaling_efficiency
};

/// One expectation checked at the end.
struct expectation {
  std::string field;  ///< "expectations[0]"
  expectation_kind kind = expectation_kind::completes;
  double value = 0;   ///< the bound (scaling efficiency: at least)
  double upper = 0;   ///< scaling efficiency: at most
};

/// The expectation's name in reports ("completes", "samplesPerSecondAtLeast", ...).
const char* to_string(expectation_kind kind);

enum class assumptions { strom, deeplearning4j };

/// A checked scenario.
struct scenario {
  std::string name;
  std::string source;  ///< the file, for messages
  std::vector<node_model> nodes;
  actors::topology_options topology;
  double heartbeat_interval_seconds = 1;
  double heartbeat_timeout_seconds = 10;
  std::optional<job_spec> job;
  std::uint64_t epochs = 0;  ///< the job's length: epochs, or ...
  std::uint64_t steps = 0;   ///< ... steps of every worker (one of the two is 0)
  sim_mode mode = sim_mode::model;
  std::vector<scenario_event> events;
  std::vector<expectation> expectations;
  std::optional<step_costs> costs;  ///< a step's costs (both modes need them; absent: none given)
  assumptions model_assumptions = assumptions::strom;
  std::uint32_t staleness = 1;      ///< the job's distributed.staleness
  bool apply_own_update = true;     ///< own updates applied at once (own_update_handling_of)
};

/// Parses and checks scenario text; relative paths resolve against `base_dir`. The job file
/// and the calibration file it names are read and checked too (the latter in model mode).
result<scenario> parse_scenario(std::string_view text, const std::string& source,
                                const std::string& base_dir);

/// Reads, parses and checks the scenario file at `path`.
result<scenario> load_scenario_file(const std::string& path);

/// Resolves the costs for model mode (a scenario written for live mode names none until it
/// is run with --mode model); the error says what is missing.
result<void> require_model_costs(const scenario& s);

/// Refuses an event at a step or an epoch past the job's end, naming it. The job's steps are
/// its workers' steps together: its `steps` of every worker it starts with, or its epochs'
/// (with the joiners' too, an epoch may take a few more). Needs the costs (an epoch's samples).
result<void> check_events_within_job(const scenario& s);

/// Errors unless `s`'s costs hold TLS's sealing and opening rates (TLS links need them).
result<void> require_tls_costs(const scenario& s);

} // namespace strom::runtime::sim
