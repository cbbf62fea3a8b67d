#include "strom/runtime/sim/scenario.hpp"

#include <capnp/message.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "strom/compute/encoders/threshold_encoder_from_spec.hpp"
#include "strom/compute/memory_estimate.hpp"
#include "strom/runtime/job/capnp_text_file.hpp"
#include "strom/runtime/sim/calibration.hpp"
#include "strom/schema/scenario.capnp.h"

namespace strom::runtime::sim {

namespace {

/// Scenarios are hand-written text; 4 MiB holds a list of tens of thousands of nodes. The
/// deepest path is Scenario > job > inline > training > updater > schedule > step, 7 levels;
/// 64 as for job files.
constexpr text_file_kind scenario_kind{"scenario", 4 << 20, 64, 12};

/// Nodes a scenario may have: the model keeps a few hundred bytes a node and the mesh plan a
/// map entry a node; a million keeps both under a gigabyte.
constexpr std::uint64_t max_nodes = 1 << 20;

/// Bits in a gigabit, and bits in a byte: link bandwidths are given in Gbit/s.
constexpr double bits_per_gigabit = 1e9;
constexpr double bits_per_byte = 8;

/// A slow-down beyond this is a hang; use `hang` (and a speed factor past it a typo).
constexpr double max_speed_ratio = 1e6;

/// Simulated time an event may be placed at: a year, far past any job.
constexpr double max_event_seconds = 365.0 * 24 * 3600;

/// Steps a job may run in a scenario: the model simulates each.
constexpr std::uint64_t max_steps = 1'000'000'000;

/// Builds errors "SOURCE: FIELD: VALUE problem".
struct problems {
  const std::string& source;
  error at(const std::string& field, const std::string& problem) const {
    return error{fmt::format("{}: {}: {}", source, field, problem)};
  }
};

bool finite_in(double value, double low, double high) {
  return std::isfinite(value) && value >= low && value <= high;
}

std::string text_of(capnp::Text::Reader text) { return {text.cStr(), text.size()}; }

result<link_model> read_link(schema::Link::Reader link, const std::string& field,
                             const problems& p) {
  link_model out;
  out.latency_seconds = link.getLatencySeconds();
  if (!finite_in(out.latency_seconds, 0, 60))
    return p.at(field + ".latencySeconds",
                fmt::format("{} is outside [0, 60] seconds", out.latency_seconds));
  const double gbit = link.getBandwidthGbitPerSecond();
  if (!(std::isfinite(gbit) && gbit > 0 && gbit <= 1e6))
    return p.at(field + ".bandwidthGbitPerSecond",
                fmt::format("{} is not a bandwidth above 0 and at most 1e6", gbit));
  out.bytes_per_second = gbit * bits_per_gigabit / bits_per_byte;
  const std::pair<const char*, double*> fractions[] = {{"loss", &out.loss},
                                                       {"duplication", &out.duplication},
                                                       {"reordering", &out.reordering}};
  out.loss = link.getLoss();
  out.duplication = link.getDuplication();
  out.reordering = link.getReordering();
  for (auto [name, value] : fractions)
    // A loss of 1 would never deliver a frame: the bound is below it.
    if (!(std::isfinite(*value) && *value >= 0 && *value < 1))
      return p.at(field + "." + name, fmt::format("{} is outside [0, 1)", *value));
  return out;
}

result<node_model> read_node(schema::Node::Reader node, const link_model& cluster_link,
                             std::uint32_t cluster_workers, const std::string& field,
                             const problems& p) {
  node_model out;
  out.name = text_of(node.getName());
  if (out.name.empty() || out.name == "hub")
    return p.at(field + ".name", fmt::format("'{}' cannot name a node (empty or 'hub', the "
                                             "plain topology's relay)",
                                             out.name));
  out.speed_factor = node.getSpeedFactor();
  if (!finite_in(out.speed_factor, 1 / max_speed_ratio, max_speed_ratio))
    return p.at(field + ".speedFactor", fmt::format("{} is outside [{}, {}]", out.speed_factor,
                                                    1 / max_speed_ratio, max_speed_ratio));
  out.workers = node.getWorkers() == 0 ? cluster_workers : node.getWorkers();
  if (out.workers > 1024)
    return p.at(field + ".workers", fmt::format("{} is outside [1, 1024]", out.workers));
  out.server = node.getServer();
  out.link = cluster_link;
  if (node.getOwnLink()) {
    auto link = read_link(node.getLink(), field + ".link", p);
    if (!link)
      return link.err();
    out.link = *link;
  }
  return out;
}

result<moment> read_moment(schema::Moment::Reader at, const std::string& field,
                           const problems& p) {
  switch (at.which()) {
    case schema::Moment::STEP:
      if (at.getStep() < 1 || at.getStep() > max_steps)
        return p.at(field + ".step", fmt::format("{} is outside [1, {}]", at.getStep(), max_steps));
      return moment{moment::unit::step, static_cast<double>(at.getStep())};
    case schema::Moment::EPOCH:
      if (at.getEpoch() < 1)
        return p.at(field + ".epoch", fmt::format("{} is below 1 (epochs count from 1)",
                                                  at.getEpoch()));
      return moment{moment::unit::epoch, static_cast<double>(at.getEpoch())};
    case schema::Moment::SECONDS:
      if (!finite_in(at.getSeconds(), 0, max_event_seconds))
        return p.at(field + ".seconds", fmt::format("{} is outside [0, {}]", at.getSeconds(),
                                                    max_event_seconds));
      return moment{moment::unit::seconds, at.getSeconds()};
  }
  return p.at(field, "unknown moment");
}

/// Checks that `name` (at `field`) names a node of the cluster or one that joins.
result<void> check_node_name(const std::string& name, const std::set<std::string>& known,
                             const std::string& field, const problems& p) {
  if (known.contains(name))
    return success();
  return p.at(field, fmt::format("'{}' is not a node of the cluster ({})", name,
                                 known.size() <= 8 ? fmt::format("{}", fmt::join(known, ", "))
                                                   : fmt::format("{} nodes; names such as {}",
                                                                 known.size(), *known.begin())));
}

result<std::vector<scenario_event>> read_events(capnp::List<schema::Event>::Reader events,
                                                std::set<std::string>& known,
                                                const link_model& cluster_link,
                                                std::uint32_t cluster_workers, const problems& p) {
  // Joining nodes first: an event may name a node that joins (later in time).
  for (unsigned i = 0; i < events.size(); ++i) {
    if (!events[i].isJoin())
      continue;
    const auto field = fmt::format("events[{}].join.node", i);
    auto joining = read_node(events[i].getJoin().getNode(), cluster_link, cluster_workers,
                             field, p);
    if (!joining)
      return joining.err();
    if (!known.insert(joining->name).second)
      return p.at(field + ".name", fmt::format("'{}' is already a node's name", joining->name));
  }
  std::vector<scenario_event> out;
  for (unsigned i = 0; i < events.size(); ++i) {
    auto e = events[i];
    scenario_event ev;
    ev.field = fmt::format("events[{}]", i);
    auto at = read_moment(e.getAt(), ev.field + ".at", p);
    if (!at)
      return at.err();
    ev.at = *at;
    // The node an event of ev.kind names, at "events[i].KIND.node".
    auto named = [&](capnp::Text::Reader name) -> result<void> {
      ev.node = text_of(name);
      return check_node_name(ev.node, known,
                             fmt::format("{}.{}.node", ev.field, to_string(ev.kind)), p);
    };
    result<void> ok = success();
    switch (e.which()) {
      case schema::Event::KILL:
        ev.kind = event_kind::kill;
        ev.silent = e.getKill().getSilent();
        ok = named(e.getKill().getNode());
        break;
      case schema::Event::HANG:
        ev.kind = event_kind::hang;
        ok = named(e.getHang().getNode());
        break;
      case schema::Event::RESUME:
        ev.kind = event_kind::resume;
        ok = named(e.getResume().getNode());
        break;
      case schema::Event::RESTART:
        ev.kind = event_kind::restart;
        ok = named(e.getRestart().getNode());
        break;
      case schema::Event::SLOW_DOWN:
        ev.kind = event_kind::slow_down;
        ev.factor = e.getSlowDown().getFactor();
        ok = named(e.getSlowDown().getNode());
        if (ok && !finite_in(ev.factor, 1 / max_speed_ratio, max_speed_ratio))
          return p.at(ev.field + ".slowDown.factor",
                      fmt::format("{} is outside [{}, {}]", ev.factor, 1 / max_speed_ratio,
                                  max_speed_ratio));
        break;
      case schema::Event::PARTITION: {
        ev.kind = event_kind::partition;
        auto groups = e.getPartition().getGroups();
        if (groups.size() < 2)
          return p.at(ev.field + ".partition.groups",
                      fmt::format("{} groups; a partition needs at least 2", groups.size()));
        std::set<std::string> seen;
        for (unsigned g = 0; g < groups.size() && ok; ++g) {
          auto& group = ev.groups.emplace_back();
          for (unsigned n = 0; n < groups[g].size() && ok; ++n) {
            const auto field = fmt::format("{}.partition.groups[{}][{}]", ev.field, g, n);
            group.push_back(text_of(groups[g][n]));
            ok = check_node_name(group.back(), known, field, p);
            if (ok && !seen.insert(group.back()).second)
              return p.at(field, fmt::format("'{}' is in two groups", group.back()));
          }
        }
        break;
      }
      case schema::Event::HEAL: ev.kind = event_kind::heal; break;
      case schema::Event::FRAME_FAULT: {
        ev.kind = event_kind::frame_fault;
        auto f = e.getFrameFault();
        const auto field = ev.field + ".frameFault";
        for (auto [list, name, target] :
             {std::tuple{f.getFrom(), "from", &ev.from}, std::tuple{f.getTo(), "to", &ev.to}})
          for (unsigned n = 0; n < list.size() && ok; ++n) {
            target->push_back(text_of(list[n]));
            ok = check_node_name(target->back(), known, fmt::format("{}.{}[{}]", field, name, n),
                                 p);
          }
        ev.fault = static_cast<frame_fault_kind>(f.getKind());
        ev.rate = f.getRate();
        ev.delay_seconds = f.getDelaySeconds();
        ev.until_seconds = f.getUntilSeconds();
        if (ok && !finite_in(ev.rate, 0, 1))
          return p.at(field + ".rate", fmt::format("{} is outside [0, 1]", ev.rate));
        if (ok && !finite_in(ev.delay_seconds, 0, max_event_seconds))
          return p.at(field + ".delaySeconds",
                      fmt::format("{} is outside [0, {}]", ev.delay_seconds, max_event_seconds));
        if (ok && !finite_in(ev.until_seconds, 0, max_event_seconds))
          return p.at(field + ".untilSeconds",
                      fmt::format("{} is outside [0, {}]", ev.until_seconds, max_event_seconds));
        break;
      }
      case schema::Event::JOIN: {
        ev.kind = event_kind::join;
        auto joining = read_node(e.getJoin().getNode(), cluster_link, cluster_workers,
                                 ev.field + ".join.node", p);
        ev.joining = *joining;  // read (and checked) above
        ev.node = ev.joining.name;
        break;
      }
      case schema::Event::SCHEDULER_KILL: ev.kind = event_kind::scheduler_kill; break;
      case schema::Event::SCHEDULER_RESTART: ev.kind = event_kind::scheduler_restart; break;
      default:
        return p.at(ev.field, "an event of a kind this strom does not know");
    }
    if (!ok)
      return ok.err();
    out.push_back(std::move(ev));
  }
  return out;
}

result<std::vector<expectation>> read_expectations(
  capnp::List<schema::Expectation>::Reader list, const problems& p) {
  std::vector<expectation> out;
  for (unsigned i = 0; i < list.size(); ++i) {
    auto e = list[i];
    expectation ex;
    ex.field = fmt::format("expectations[{}]", i);
    auto bounded = [&](const char* name, double value, double high) -> result<void> {
      ex.value = value;
      if (!finite_in(value, 0, high))
        return p.at(ex.field + "." + name, fmt::format("{} is outside [0, {}]", value, high));
      return success();
    };
    result<void> ok = success();
    switch (e.which()) {
      case schema::Expectation::COMPLETES: ex.kind = expectation_kind::completes; break;
      case schema::Expectation::FAILS: ex.kind = expectation_kind::fails; break;
      case schema::Expectation::ACCURACY_AT_LEAST:
        ex.kind = expectation_kind::accuracy_at_least;
        ok = bounded("accuracyAtLeast", e.getAccuracyAtLeast(), 1);
        break;
      case schema::Expectation::NOTHING_APPLIED_TWICE:
        ex.kind = expectation_kind::nothing_applied_twice;
        break;
      case schema::Expectation::DETECTION_WITHIN_SECONDS:
        ex.kind = expectation_kind::detection_within;
        ok = bounded("detectionWithinSeconds", e.getDetectionWithinSeconds(), max_event_seconds);
        break;
      case schema::Expectation::RESTORE_WITHIN_SECONDS:
        ex.kind = expectation_kind::restore_within;
        ok = bounded("restoreWithinSeconds", e.getRestoreWithinSeconds(), max_event_seconds);
        break;
      case schema::Expectation::SAMPLES_REDONE_AT_MOST:
        ex.kind = expectation_kind::samples_redone_at_most;
        ex.value = static_cast<double>(e.getSamplesRedoneAtMost());
        break;
      case schema::Expectation::SAMPLES_PER_SECOND_AT_LEAST:
        ex.kind = expectation_kind::samples_per_second_at_least;
        ok = bounded("samplesPerSecondAtLeast", e.getSamplesPerSecondAtLeast(), 1e15);
        break;
      case schema::Expectation::SCALING_EFFICIENCY: {
        ex.kind = expectation_kind::scaling_efficiency;
        auto range = e.getScalingEfficiency();
        ok = bounded("scalingEfficiency.atLeast", range.getAtLeast(), 1e6);
        ex.upper = range.getAtMost();
        if (ok && !(finite_in(ex.upper, ex.value, 1e6)))
          return p.at(ex.field + ".scalingEfficiency.atMost",
                      fmt::format("{} is below atLeast ({}) or not finite", ex.upper, ex.value));
        break;
      }
      default:
        return p.at(ex.field, "an expectation of a kind this strom does not know");
    }
    if (!ok)
      return ok.err();
    out.push_back(std::move(ex));
  }
  return out;
}

result<step_costs> read_given_costs(schema::GivenCosts::Reader given, const job_spec& job,
                                    const problems& p) {
  step_costs out;
  const std::pair<const char*, double> times[] = {{"stepSeconds", given.getStepSeconds()},
                                                  {"encodeSeconds", given.getEncodeSeconds()},
                                                  {"decodeSeconds", given.getDecodeSeconds()},
                                                  {"overheadSeconds", given.getOverheadSeconds()}};
  for (auto [name, value] : times)
    if (!finite_in(value, 0, 3600))
      return p.at(fmt::format("costs.given.{}", name),
                  fmt::format("{} is outside [0, 3600] seconds", value));
  if (given.getStepSeconds() <= 0)
    return p.at("costs.given.stepSeconds",
                fmt::format("{} is not above 0", given.getStepSeconds()));
  out.step_seconds = given.getStepSeconds();
  out.encode_seconds = given.getEncodeSeconds();
  out.decode_seconds = given.getDecodeSeconds();
  out.overhead_seconds = given.getOverheadSeconds();
  for (auto [name, rate] : {std::pair{"tlsSealBytesPerSecond", given.getTlsSealBytesPerSecond()},
                            std::pair{"tlsOpenBytesPerSecond", given.getTlsOpenBytesPerSecond()}})
    if (!(std::isfinite(rate) && rate >= 0))
      return p.at(fmt::format("costs.given.{}", name),
                  fmt::format("{} is not a rate of at least 0 bytes/s", rate));
  out.tls_seal_bytes_per_second = given.getTlsSealBytesPerSecond();
  out.tls_open_bytes_per_second = given.getTlsOpenBytesPerSecond();
  out.frame_bytes = given.getFrameBytes();
  out.samples_per_epoch = given.getSamplesPerEpoch();
  if (out.samples_per_epoch < 1)
    return p.at("costs.given.samplesPerEpoch", "0 is below 1");
  auto spec = job.reader();
  out.batch_size = given.getBatchSize() != 0 ? given.getBatchSize()
                                             : spec.getTraining().getBatchSize();
  auto estimate = compute::estimate_memory(spec, {});
  if (!estimate)
    return p.at("job", estimate.err().message);
  out.parameters = given.getParameters() != 0 ? given.getParameters()
                                              : estimate->parameters / sizeof(float);
  out.updater_floats = estimate->updater_state / sizeof(float);
  return out;
}

result<job_spec> read_job(schema::JobSource::Reader source, const std::string& scenario_source,
                          const std::string& base_dir) {
  if (source.isPath()) {
    const std::filesystem::path path{source.getPath().cStr()};
    if (path.empty())
      return error{fmt::format("{}: job.path: empty; name a job file or give the job inline",
                               scenario_source)};
    const auto resolved = path.is_absolute() ? path : std::filesystem::path{base_dir} / path;
    auto job = load_job_file(resolved.lexically_normal().string());
    if (!job)
      return error{fmt::format("{}: job.path: {}", scenario_source, job.err().message)};
    return job;
  }
  job_spec job{source.getInline(), scenario_source + " (job.inline)"};
  resolve_data_paths(job.builder(), base_dir);
  if (auto ok = check_job(job); !ok)
    return ok.err();
  return job;
}

} // namespace

const char* to_string(sim_mode mode) { return mode == sim_mode::live ? "live" : "model"; }

result<sim_mode> parse_sim_mode(std::string_view text) {
  if (text == "live")
    return sim_mode::live;
  if (text == "model")
    return sim_mode::model;
  return error{fmt::format("mode '{}' is not live or model", text)};
}

const char* to_string(event_kind kind) {
  switch (kind) {
    case event_kind::kill: return "kill";
    case event_kind::hang: return "hang";
    case event_kind::resume: return "resume";
    case event_kind::restart: return "restart";
    case event_kind::slow_down: return "slowDown";
    case event_kind::partition: return "partition";
    case event_kind::heal: return "heal";
    case event_kind::frame_fault: return "frameFault";
    case event_kind::join: return "join";
    case event_kind::scheduler_kill: return "schedulerKill";
    case event_kind::scheduler_restart: return "schedulerRestart";
  }
  return "unknown";
}

const char* to_string(expectation_kind kind) {
  switch (kind) {
    case expectation_kind::completes: return "completes";
    case expectation_kind::fails: return "fails";
    case expectation_kind::accuracy_at_least: return "accuracyAtLeast";
    case expectation_kind::nothing_applied_twice: return "nothingAppliedTwice";
    case expectation_kind::detection_within: return "detectionWithinSeconds";
    case expectation_kind::restore_within: return "restoreWithinSeconds";
    case expectation_kind::samples_redone_at_most: return "samplesRedoneAtMost";
    case expectation_kind::samples_per_second_at_least: return "samplesPerSecondAtLeast";
    case expectation_kind::scaling_efficiency: return "scalingEfficiency";
  }
  return "unknown";
}

result<scenario> parse_scenario(std::string_view text, const std::string& source,
                                const std::string& base_dir) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::Scenario>();
  if (auto decoded = decode_capnp_text(text, source, scenario_kind, capnp::toDynamic(root));
      !decoded)
    return decoded.err();
  const problems p{source};
  auto s = root.asReader();
  scenario out;
  out.source = source;
  out.name = text_of(s.getName());
  out.mode = s.getMode() == schema::SimMode::LIVE ? sim_mode::live : sim_mode::model;

  auto job = read_job(s.getJob(), source, base_dir);
  if (!job)
    return job.err();
  out.job.emplace(std::move(*job));
  auto spec = out.job->reader();
  out.staleness = spec.getDistributed().getStaleness();
  const auto sharing = spec.getDistributed().getSharing();
  out.apply_own_update =
    compute::own_update_handling_of(
      sharing, compute::update_power(sharing, spec.getTraining().getUpdater()))
      .at_once;

  auto cluster = s.getCluster();
  auto cluster_link = read_link(cluster.getLink(), "cluster.link", p);
  if (!cluster_link)
    return cluster_link.err();
  const auto workers = cluster.getWorkersPerNode();
  if (workers < 1 || workers > 1024)
    return p.at("cluster.workersPerNode", fmt::format("{} is outside [1, 1024]", workers));
  std::set<std::string> known;
  if (cluster.getNodes().isCount()) {
    const auto count = cluster.getNodes().getCount();
    if (count < 1 || count > max_nodes)
      return p.at("cluster.nodes.count", fmt::format("{} is outside [1, {}]", count, max_nodes));
    out.nodes.reserve(count);
    for (std::uint32_t i = 1; i <= count; ++i)
      out.nodes.push_back({fmt::format("n{}", i), 1.0, workers, *cluster_link});
  } else {
    auto list = cluster.getNodes().getList();
    if (list.size() < 1 || list.size() > max_nodes)
      return p.at("cluster.nodes.list",
                  fmt::format("{} nodes is outside [1, {}]", list.size(), max_nodes));
    for (unsigned i = 0; i < list.size(); ++i) {
      const auto field = fmt::format("cluster.nodes.list[{}]", i);
      auto node = read_node(list[i], *cluster_link, workers, field, p);
      if (!node)
        return node.err();
      out.nodes.push_back(std::move(*node));
    }
  }
  for (std::size_t i = 0; i < out.nodes.size(); ++i)
    if (!known.insert(out.nodes[i].name).second)
      return p.at(fmt::format("cluster.nodes.list[{}].name", i),
                  fmt::format("'{}' names two nodes", out.nodes[i].name));

  out.topology = topology_of(*out.job);
  switch (cluster.getTopology()) {
    case schema::SimTopology::FROM_JOB: break;
    case schema::SimTopology::PLAIN: out.topology.kind = actors::topology_kind::plain; break;
    case schema::SimTopology::MESH: out.topology.kind = actors::topology_kind::mesh; break;
    case schema::SimTopology::AUTO: out.topology.kind = actors::topology_kind::automatic; break;
  }
  if (cluster.getFanout() != 0) {
    if (cluster.getFanout() > actors::max_fanout)
      return p.at("cluster.fanout", fmt::format("{} is outside [1, {}] (0: the job's)",
                                                cluster.getFanout(), actors::max_fanout));
    out.topology.fanout = cluster.getFanout();
  }
  out.heartbeat_interval_seconds = cluster.getHeartbeatIntervalSeconds();
  out.heartbeat_timeout_seconds = cluster.getHeartbeatTimeoutSeconds();
  if (!finite_in(out.heartbeat_timeout_seconds, 1e-3, 3600))
    return p.at("cluster.heartbeatTimeoutSeconds",
                fmt::format("{} is outside [0.001, 3600]", out.heartbeat_timeout_seconds));
  if (!finite_in(out.heartbeat_interval_seconds, 1e-4, out.heartbeat_timeout_seconds))
    return p.at("cluster.heartbeatIntervalSeconds",
                fmt::format("{} is outside [0.0001, the timeout {}]",
                            out.heartbeat_interval_seconds, out.heartbeat_timeout_seconds));

  switch (s.which()) {
    case schema::Scenario::FROM_JOB:
      out.epochs = spec.getTraining().getEpochs();
      break;
    case schema::Scenario::EPOCHS:
      out.epochs = s.getEpochs();
      if (out.epochs < 1 || out.epochs > 1'000'000)
        return p.at("epochs", fmt::format("{} is outside [1, 1000000]", out.epochs));
      break;
    case schema::Scenario::STEPS:
      out.steps = s.getSteps();
      if (out.steps < 1 || out.steps > max_steps)
        return p.at("steps", fmt::format("{} is outside [1, {}]", out.steps, max_steps));
      break;
  }

  auto events = read_events(s.getEvents(), known, *cluster_link, workers, p);
  if (!events)
    return events.err();
  out.events = std::move(*events);
  auto expectations = read_expectations(s.getExpectations(), p);
  if (!expectations)
    return expectations.err();
  out.expectations = std::move(*expectations);

  out.model_assumptions = s.getModel().getAssumptions() == schema::Assumptions::DEEPLEARNING4J
                            ? assumptions::deeplearning4j
                            : assumptions::strom;
  auto costs = s.getCosts();
  const double density = costs.getDensity();
  if (!finite_in(density, 0, 1))
    return p.at("costs.density", fmt::format("{} is outside [0, 1]", density));
  if (costs.isGiven()) {
    auto given = read_given_costs(costs.getGiven(), *out.job, p);
    if (!given)
      return given.err();
    given->density = density;
    out.costs = *given;
  } else if (costs.getCalibration().size() > 0) {
    const std::filesystem::path path{costs.getCalibration().cStr()};
    const auto resolved = path.is_absolute() ? path : std::filesystem::path{base_dir} / path;
    auto table = load_calibration_file(resolved.lexically_normal().string());
    if (!table)
      return p.at("costs.calibration", table.err().message);
    out.costs = costs_at(*table, density);
  }
  return out;
}

result<scenario> load_scenario_file(const std::string& path) {
  auto text = read_text_file(path, scenario_kind);
  if (!text)
    return text.err();
  auto dir = std::filesystem::path{path}.parent_path().string();
  return parse_scenario(*text, path, dir.empty() ? "." : dir);
}

result<void> require_model_costs(const scenario& s) {
  if (s.costs)
    return success();
  return error{fmt::format("{}: costs: model mode needs the costs of a step: name a calibration "
                           "file ('strom sim calibrate JOB -o FILE' writes one) or give them",
                           s.source)};
}

std::string to_string(const moment& at) {
  switch (at.at) {
    case moment::unit::step: return fmt::format("step {}", at.value);
    case moment::unit::epoch: return fmt::format("epoch {}", at.value);
    case moment::unit::seconds: break;
  }
  return fmt::format("{} s", at.value);
}

result<void> check_events_within_job(const scenario& s) {
  std::uint64_t workers = 0, joining = 0;
  for (const auto& node : s.nodes)
    workers += node.server ? 0 : node.workers;
  for (const auto& e : s.events)
    joining += e.kind == event_kind::join && !e.joining.server ? e.joining.workers : 0;
  const auto per_epoch = steps_per_epoch(*s.costs, workers);
  const std::uint64_t epochs =
    s.steps > 0 ? (s.steps + per_epoch - 1) / per_epoch
    : s.epochs > 0 ? s.epochs : s.job->reader().getTraining().getEpochs();
  // The job's steps are its workers' steps together; joiners split an epoch in more of them.
  const auto all = workers + joining;
  const std::uint64_t last_step =
    s.steps > 0 ? s.steps * workers
                : epochs * std::max(per_epoch * workers, steps_per_epoch(*s.costs, all) * all);
  const auto of_workers = fmt::format("{} worker{}", workers, workers == 1 ? "" : "s");
  const auto length =
    s.steps > 0 ? fmt::format("steps = {} of {}", s.steps, of_workers)
                : fmt::format("{} epoch{} of {} steps of {}", epochs, epochs == 1 ? "" : "s",
                              per_epoch, of_workers);
  const problems p{s.source};
  for (const auto& e : s.events) {
    if (e.at.at == moment::unit::step && e.at.value > static_cast<double>(last_step))
      return p.at(e.field + ".at", fmt::format("{} is past the job's end, step {} ({})",
                                               to_string(e.at), last_step, length));
    if (e.at.at == moment::unit::epoch && e.at.value > static_cast<double>(epochs))
      return p.at(e.field + ".at", fmt::format("{} is past the job's end: it trains {} "
                                               "epoch{}", to_string(e.at), epochs,
                                               epochs == 1 ? "" : "s"));
  }
  return success();
}

result<void> require_tls_costs(const scenario& s) {
  if (s.costs && s.costs->tls_seal_bytes_per_second > 0 && s.costs->tls_open_bytes_per_second > 0)
    return success();
  return error{fmt::format("{}: costs: TLS links (--tls-*) need what sealing and opening cost: "
                           "tlsSealBytesPerSecond and tlsOpenBytesPerSecond, which 'strom sim "
                           "calibrate JOB -o FILE' measures (run it again for a calibration "
                           "made before it did) or costs.given holds",
                           s.source)};
}

} // namespace strom::runtime::sim
