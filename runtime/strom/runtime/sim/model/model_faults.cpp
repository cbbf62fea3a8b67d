// The model mode's faults (model_run.hpp): the scenario's scripted events (kills, hangs,
// slow-downs, partitions, frame faults, scheduler outages, joins), a lost node's detection
// and remap, and a joiner's way in.

#include "strom/runtime/sim/model/model_run.hpp"

#include <chrono>

#include "strom/actors/timing.hpp"
#include "strom/runtime/sim/model/failure_timing.hpp"

namespace strom::runtime::sim::model_detail {

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

} // namespace strom::runtime::sim::model_detail
