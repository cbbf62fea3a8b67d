#pragma once
// The harness's entry point: runs a scenario in its mode (or the one asked for), checks its
// expectations and gives back what `strom sim --report-out` writes. A host program calls this
// the same way the command does (the command is a thin front over it).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strom/compute/result.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "strom/runtime/job/training_progress.hpp"
#include "strom/runtime/sim/model/model.hpp"
#include "strom/runtime/sim/scenario.hpp"

namespace strom::runtime::sim {

/// How to run a scenario.
struct run_options {
  std::optional<std::uint64_t> seed;   ///< default: the job's training.seed
  std::optional<sim_mode> mode;        ///< default: the scenario's
  std::string trace_out;               ///< write the trace here (JSON lines); empty: don't
  /// Live mode: told the job's progress as a client of the scheduler is (a terminal's
  /// progress line); null: nobody.
  training_observer* observer = nullptr;
  /// The identity every simulated node presents on its links, which are then TLS
  /// connections (live mode: made and used for real; model mode: their bytes and costs).
  /// Null: plaintext links, as in a cluster without --tls-*.
  std::shared_ptr<const tls_context> tls;
};

/// One expectation and what the run found.
struct expectation_result {
  std::string name;      ///< "completes", "samplesPerSecondAtLeast", ...
  std::string field;     ///< "expectations[2]"
  std::string expected;  ///< "at least 1000"
  std::string got;       ///< "1234.5"
  std::optional<bool> held;  ///< empty: not checked in this mode (the note says why)
  std::string note;
};

/// strom's own design on the same costs, for a scenario run under Deeplearning4j's assumptions.
struct design_prediction {
  std::string topology;
  double samples_per_second = 0;
  double scaling_efficiency = 0;
  double step_period_seconds = 0;
};

/// One of the scenario's events and when the run met it.
struct event_result {
  std::string field;         ///< "events[1]"
  std::string kind;          ///< "kill", "frameFault", ...
  std::string at;            ///< as written: "step 300", "epoch 2", "3.5 s"
  double fired_seconds = -1; ///< since the job started; -1: never
};

/// Everything a run reports.
struct sim_result {
  bool passed = false;
  sim_mode mode = sim_mode::model;
  std::string scenario;
  std::size_t nodes = 0;  ///< the cluster's at the start
  std::uint64_t seed = 0;
  std::string trace_sha256;
  std::uint64_t trace_lines = 0;
  std::string tls_identity;  ///< whose certificate the nodes presented; empty: no TLS
  assumptions assumed = assumptions::strom;
  model_outcome model;
  std::vector<event_result> events;
  /// The scenario's expectations, then a "fires" check for each event that never fired.
  std::vector<expectation_result> expectations;
  std::vector<design_prediction> strom_design;  ///< only under Deeplearning4j's assumptions
};

/// Runs `s` in its mode (live_run.hpp, model.hpp).
result<sim_result> run_scenario(const scenario& s, const run_options& options);

/// The failed expectations, "name (field): expected ..., got ..." each, "; "-separated.
std::string failed_expectations(const sim_result& r);

/// The report: one JSON object.
std::string to_json(const sim_result& r);

} // namespace strom::runtime::sim
