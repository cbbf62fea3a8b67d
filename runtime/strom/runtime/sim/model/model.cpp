#include "strom/runtime/sim/model/model.hpp"
#include "strom/runtime/sim/model/model_run.hpp"

namespace strom::runtime::sim {

namespace model_detail {

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

  out_.events_fired_at.assign(s_.events.size(), -1.0);
  for (std::size_t i = 0; i < s_.events.size(); ++i) {
    const auto& at = s_.events[i].at;
    if (at.at == moment::unit::seconds)
      push({at.value, 0, event_type::scripted, 0, 0, i});
    else if (at.at == moment::unit::step)
      worker_step_events_.emplace_back(static_cast<std::uint64_t>(at.value), i);
    else
      epoch_events_.emplace_back(
        (static_cast<std::uint64_t>(at.value) - 1) * steps_per_epoch_ + 1, i);
  }
  const auto by_step = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::stable_sort(epoch_events_.begin(), epoch_events_.end(), by_step);
  std::stable_sort(worker_step_events_.begin(), worker_step_events_.end(), by_step);
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
    // An epoch's events happen as the first node starts its first step.
    while (next_epoch_event_ < epoch_events_.size()
           && epoch_events_[next_epoch_event_].first <= job_step_)
      push({now_, 0, event_type::scripted, 0, 0, epoch_events_[next_epoch_event_++].second});
  }
  // A step's events happen as the job's step of that number (its workers' steps counted
  // together, as live mode counts them) starts.
  worker_steps_started_ += n.spec.workers;
  while (next_worker_step_event_ < worker_step_events_.size()
         && worker_step_events_[next_worker_step_event_].first <= worker_steps_started_)
    push({now_, 0, event_type::scripted, 0, 0,
          worker_step_events_[next_worker_step_event_++].second});
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
    case event_type::scripted:
      out_.events_fired_at[e.step] = now_;
      scripted(s_.events[e.step]);
      return;
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

} // namespace model_detail

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
  model_detail::model_run run{s, assumed, seed, trace, tls};
  return run.run();
}

} // namespace strom::runtime::sim

