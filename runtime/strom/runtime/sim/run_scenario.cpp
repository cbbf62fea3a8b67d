#include "strom/runtime/sim/run_scenario.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "strom/runtime/sim/live/live_run.hpp"
#include "strom/runtime/sim/sim_trace.hpp"
#include "strom/runtime/sim/tls_pipe.hpp"

namespace strom::runtime::sim {

namespace {

// Ordered: the report's keys keep the order they are written in.
using json = nlohmann::ordered_json;

/// The longest of `faults`' times picked by `time` (-1: none happened).
template <class Pick>
double longest(const std::vector<model_fault>& faults, Pick time) {
  double most = -1;
  for (const auto& f : faults)
    most = std::max(most, time(f));
  return most;
}

expectation_result check(const expectation& e, const model_outcome& m) {
  expectation_result r{to_string(e.kind), e.field, {}, {}, std::nullopt, {}};
  switch (e.kind) {
    case expectation_kind::completes:
      r.expected = "the job completes";
      r.got = m.completed ? "completed" : "failed: " + m.failure;
      r.held = m.completed;
      break;
    case expectation_kind::fails:
      r.expected = "the job fails";
      r.got = m.completed ? "completed" : "failed: " + m.failure;
      r.held = !m.completed;
      break;
    case expectation_kind::accuracy_at_least:
      r.expected = fmt::format("test accuracy at least {}", e.value);
      if (m.test_accuracy < 0) {
        r.got = "none";
        r.note = "not checked: model mode trains nothing (run the scenario with --mode live)";
        break;
      }
      r.got = fmt::format("{}", m.test_accuracy);
      r.held = m.test_accuracy >= e.value;
      break;
    case expectation_kind::nothing_applied_twice:
      r.expected = "no frame applied twice";
      r.got = fmt::format("{} applied twice, {} duplicates dropped", m.duplicates_applied,
                          m.duplicates_dropped);
      r.held = m.duplicates_applied == 0;
      r.note = "the model's relays drop duplicates by (origin, sequence) as the product's do";
      break;
    case expectation_kind::detection_within: {
      const double most = longest(m.faults, [](const model_fault& f) { return f.detected_after; });
      r.expected = fmt::format("every lost node found within {} s", e.value);
      r.got = most < 0 ? "no node was lost" : fmt::format("{} s", most);
      r.held = most <= e.value;
      break;
    }
    case expectation_kind::restore_within: {
      double most = -1;
      std::string never;
      for (const auto& f : m.faults) {
        const bool restores = f.event == "join" || f.event == "restart"
                              || f.event == "schedulerKill";
        if (restores && f.restored_after < 0)
          never = f.node;
        most = std::max(most, f.restored_after);
      }
      r.expected = fmt::format("every joining node trains within {} s", e.value);
      r.got = !never.empty() ? fmt::format("{} never trained again", never)
                             : most < 0 ? "nothing was restored" : fmt::format("{} s", most);
      r.held = never.empty() && most <= e.value;
      break;
    }
    case expectation_kind::samples_redone_at_most:
      r.expected = fmt::format("at most {} samples redone", e.value);
      r.got = fmt::format("{}", m.samples_redone);
      r.held = static_cast<double>(m.samples_redone) <= e.value;
      break;
    case expectation_kind::samples_per_second_at_least:
      r.expected = fmt::format("at least {} samples/s", e.value);
      r.got = fmt::format("{}", m.samples_per_second);
      r.held = m.samples_per_second >= e.value;
      break;
    case expectation_kind::scaling_efficiency:
      r.expected = fmt::format("scaling efficiency in [{}, {}]", e.value, e.upper);
      r.got = fmt::format("{}", m.scaling_efficiency);
      r.held = m.scaling_efficiency >= e.value && m.scaling_efficiency <= e.upper;
      break;
  }
  return r;
}

/// An event the run never reached: a scenario that does not do what it says, unless the job
/// failed before it (then it could not be reached, and a `fails` expectation speaks for it).
expectation_result never_fired(const scenario_event& e, const model_outcome& m) {
  expectation_result r{"fires", e.field, fmt::format("{} at {} happens", to_string(e.kind),
                                                     to_string(e.at)),
                       {}, std::nullopt, {}};
  if (!m.completed) {
    r.got = "the job failed first";
    r.note = "not checked: the job failed before it";
    return r;
  }
  r.got = fmt::format("never happened: the job ended at {:.3g} s", m.simulated_seconds);
  r.held = false;
  return r;
}

json node_json(const model_node_figures& n) {
  return {{"name", n.name},     {"workers", n.workers},   {"speed_factor", n.speed_factor},
          {"links", n.links},   {"bytes_out", n.bytes_out}, {"bytes_in", n.bytes_in},
          {"steps", n.steps},   {"lost", n.lost}};
}

/// Seconds, or null where negative (not measured).
json optional_seconds(double value) { return value < 0 ? json(nullptr) : json(value); }

/// Whether the simulated nodes may present `identity`: they join as nodes, and the one
/// identity must also pass its own handshake (each link's ends present it to each other).
result<void> check_node_identity(const tls_context& identity) {
  if (identity.identity().role != peer_role::node)
    return error{fmt::format("the TLS identity '{}' is a {}'s certificate: simulated nodes "
                             "join as nodes and need a node's",
                             identity.identity().name, to_string(identity.identity().role))};
  if (auto link = tls_pipe::open(identity, identity); !link)
    return error{fmt::format("the TLS identity '{}' fails its own handshake: {}",
                             identity.identity().name, link.err().message)};
  return success();
}

json tls_json(const sim_result& r) {
  const auto& t = r.model.tls;
  if (!t.on)
    return nullptr;
  if (r.mode == sim_mode::model)  // the model makes no connections: their costs only
    return {{"identity", r.tls_identity},
            {"links", nullptr},
            {"handshake_bytes", nullptr},
            {"failures", nullptr}};
  return {{"identity", r.tls_identity},
          {"links", t.links},
          {"handshake_bytes", t.handshake_bytes},
          {"failures", t.failures}};
}

} // namespace

result<sim_result> run_scenario(const scenario& s, const run_options& options) {
  sim_result r;
  r.mode = options.mode.value_or(s.mode);
  r.scenario = s.name;
  r.nodes = s.nodes.size();
  r.seed = options.seed.value_or(s.job->reader().getTraining().getSeed());
  r.assumed = s.model_assumptions;
  if (r.mode == sim_mode::model)
    if (auto ok = require_model_costs(s); !ok)
      return ok.err();
  if (s.costs)  // live mode refuses a scenario without them as it starts
    if (auto ok = check_events_within_job(s); !ok)
      return ok.err();
  if (options.tls) {
    if (auto ok = check_node_identity(*options.tls); !ok)
      return ok.err();
    r.tls_identity = options.tls->identity().name;
  }
  std::unique_ptr<sim_trace> trace;
  if (options.trace_out.empty()) {
    trace = std::make_unique<sim_trace>();
  } else {
    auto to_file = sim_trace::to_file(options.trace_out);
    if (!to_file)
      return to_file.err();
    trace = std::move(*to_file);
  }
  const bool tls = options.tls != nullptr;
  auto model = r.mode == sim_mode::live
                 ? run_live(s, r.seed, *trace, options.observer, options.tls.get())
                 : run_model(s, s.model_assumptions, r.seed, *trace, tls);
  if (!model)
    return model.err();
  r.model = std::move(*model);
  r.trace_lines = trace->lines();
  auto hash = trace->finish();
  if (!hash)
    return hash.err();
  r.trace_sha256 = *hash;
  if (r.mode == sim_mode::model && s.model_assumptions == assumptions::deeplearning4j) {
    // The same costs under strom's design: its own topology and the mesh.
    for (auto kind : {s.topology.kind, actors::topology_kind::mesh}) {
      scenario variant = s;
      variant.topology.kind = kind;
      sim_trace untraced;
      auto ours = run_model(variant, assumptions::strom, r.seed, untraced, tls);
      if (!ours)
        return ours.err();
      r.strom_design.push_back({ours->topology, ours->samples_per_second,
                                ours->scaling_efficiency, ours->step_period_seconds});
      if (kind == actors::topology_kind::mesh)
        break;
    }
  }
  for (const auto& e : s.expectations)
    r.expectations.push_back(check(e, r.model));
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const auto& e = s.events[i];
    r.events.push_back({e.field, to_string(e.kind), to_string(e.at), r.model.events_fired_at[i]});
    if (r.model.events_fired_at[i] < 0)
      r.expectations.push_back(never_fired(e, r.model));
  }
  r.passed = std::none_of(r.expectations.begin(), r.expectations.end(),
                          [](const expectation_result& e) { return e.held == false; });
  return r;
}

std::string failed_expectations(const sim_result& r) {
  std::string out;
  for (const auto& e : r.expectations)
    if (e.held == false)
      out += fmt::format("{}{} ({}): expected {}, got {}", out.empty() ? "" : "; ", e.name,
                         e.field, e.expected, e.got);
  return out;
}

std::string to_json(const sim_result& r) {
  const auto& m = r.model;
  auto expectations = json::array();
  for (const auto& e : r.expectations)
    expectations.push_back({{"name", e.name},
                            {"field", e.field},
                            {"expected", e.expected},
                            {"got", e.got},
                            {"held", e.held ? json(*e.held) : json(nullptr)},
                            {"note", e.note}});
  auto events = json::array();
  for (const auto& e : r.events)
    events.push_back({{"field", e.field},
                      {"kind", e.kind},
                      {"at", e.at},
                      {"fired_seconds", optional_seconds(e.fired_seconds)}});
  auto faults = json::array();
  for (const auto& f : m.faults)
    faults.push_back({{"event", f.event},
                      {"node", f.node},
                      {"at", f.at},
                      {"detected_after", optional_seconds(f.detected_after)},
                      {"remapped_after", optional_seconds(f.remapped_after)},
                      {"restored_after", optional_seconds(f.restored_after)}});
  auto nodes = json::array();
  std::uint64_t bytes_sent = 0;
  for (const auto& n : m.nodes) {
    nodes.push_back(node_json(n));
    bytes_sent += n.bytes_out;
  }
  // Lost once each time one was found lost (a restarted node may be lost and back).
  const auto lost = std::count_if(m.faults.begin(), m.faults.end(),
                                  [](const model_fault& f) { return f.detected_after >= 0; });
  auto links = json::array();
  for (const auto& l : m.links)
    links.push_back({{"from", l.from}, {"to", l.to}, {"bytes", l.bytes}});
  auto design = json::array();
  for (const auto& d : r.strom_design)
    design.push_back({{"topology", d.topology},
                      {"samples_per_second", d.samples_per_second},
                      {"scaling_efficiency", d.scaling_efficiency},
                      {"step_period_seconds", d.step_period_seconds}});
  std::size_t restored = 0;
  for (const auto& f : m.faults)
    restored += (f.event == "join" || f.event == "restart") && f.restored_after >= 0 ? 1 : 0;
  const double detection = longest(m.faults, [](const model_fault& f) { return f.detected_after; });
  const double restore = longest(m.faults, [](const model_fault& f) {
    return f.event == "schedulerKill" ? -1.0 : f.restored_after;
  });
  json out;
  out["passed"] = r.passed;
  out["mode"] = to_string(r.mode);
  out["scenario"] = r.scenario;
  out["nodes"] = r.nodes;
  out["workers"] = m.workers;
  out["seed"] = r.seed;
  out["trace_sha256"] = r.trace_sha256;
  out["trace_lines"] = r.trace_lines;
  out["assumptions"] = r.assumed == assumptions::strom ? "strom" : "deeplearning4j";
  out["completed"] = m.completed;
  out["failure"] = m.completed ? json(nullptr) : json(m.failure);
  out["samples_per_second"] = m.samples_per_second;
  out["scaling_efficiency"] = m.scaling_efficiency;
  out["single_worker_samples_per_second"] = m.single_worker_samples_per_second;
  out["step_period_seconds"] = m.step_period_seconds;
  out["simulated_seconds"] = m.simulated_seconds;
  out["test_accuracy"] = m.test_accuracy < 0 ? json(nullptr) : json(m.test_accuracy);
  out["expectations"] = std::move(expectations);
  out["events"] = std::move(events);
  out["train_samples"] = m.samples_trained;
  out["train_samples_per_second"] = m.samples_per_second;
  out["bytes_sent"] = bytes_sent;
  out["samples_redone"] = m.samples_redone;
  out["nodes_lost"] = lost;
  out["nodes_restored"] = restored;
  out["scheduler_restarts"] = m.scheduler_restarts;
  out["server_failovers"] = m.server_failovers;
  out["failure_detection_seconds"] = optional_seconds(detection);
  out["restore_seconds"] = optional_seconds(restore);
  out["frames_sent"] = m.frames_sent;
  out["duplicate_updates_dropped"] = m.duplicates_dropped;
  out["duplicate_updates_applied"] = m.duplicates_applied;
  out["frames_rejected"] = m.frames_rejected;
  out["frame_faults"] = {{"dropped", m.frame_faults.dropped},
                         {"duplicated", m.frame_faults.duplicated},
                         {"reordered", m.frame_faults.reordered},
                         {"delayed", m.frame_faults.delayed},
                         {"corrupted", m.frame_faults.corrupted}};
  out["topology"] = {{"kind", m.topology},
                     {"fanout", m.fanout},
                     {"version", m.topology_version},
                     {"max_links", m.max_links}};
  out["root"] = node_json(m.root);
  out["faults"] = std::move(faults);
  out["strom_design"] = std::move(design);
  out["model_events"] = m.events;
  out["per_node"] = std::move(nodes);
  out["links"] = std::move(links);
  out["tls"] = tls_json(r);
  return out.dump();
}

} // namespace strom::runtime::sim
