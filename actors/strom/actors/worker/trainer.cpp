#include "strom/actors/worker/trainer.hpp"
#include "strom/actors/worker/trainer_snapshot.hpp"
#include "strom/actors/worker/trainer_steps.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <thread>

#include "strom/log.hpp"

namespace strom::actors::trainer_steps {

namespace {

/// What each update is multiplied by among `workers` (trainer_setup::update_power).
float update_scale(std::uint32_t workers, float power) {
  return static_cast<float>(std::pow(static_cast<double>(std::max(workers, 1u)),
                                     -static_cast<double>(power)));
}

/// Whether the frame carries this worker's own update, which its replica already holds.
bool is_own(const compute::frame_header& header, const trainer_setup& setup) {
  return setup.apply_own_update && header.origin_node == setup.framer->node_id()
         && header.worker == setup.worker;
}

caf::error describe(std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return caf::make_error(caf::sec::runtime_error, std::string{"trainer: "} + e.what());
  } catch (...) {
    return caf::make_error(caf::sec::runtime_error, "trainer: unknown exception");
  }
}

/// The entry of `origin`; a new one (no member yet) for an origin first heard of now.
origin_progress& origin_entry(trainer_state& st, std::uint64_t origin) {
  for (auto& entry : st.origins)
    if (entry.origin == origin)
      return entry;
  return st.origins.emplace_back(origin_progress{origin, 0, 0, 0, false});
}

/// Whether the next update (the (batches + 1)-th of the epoch) may be computed: every origin
/// has drained the epoch or its clock (the updates of its slowest worker that its applied
/// frames include) is at least batches - staleness.
///
/// Why this cannot deadlock, even at staleness 0 (fully synchronous): every update becomes a
/// frame as soon as it is computed. Take the waiting trainer with the fewest updates, j.
/// Every worker still training at an origin that has not drained has computed at least j
/// updates (it waits at j or more; a worker that finished its share no longer counts for the
/// clock, and once all have, the origin drains), so the origin's frames include j of each:
/// its clock reaches j >= j - staleness at every trainer and that trainer resumes.
bool may_step(const trainer_state& st, std::uint32_t staleness) {
  // Paced by the shards' answers (dist_sync), never by frames.
  if (std::holds_alternative<kvstore_worker_state>(st.mode))
    return true;
  for (const auto& entry : st.origins) {
    if (!entry.member || entry.drained > st.epoch)
      continue;
    const std::uint64_t clock = entry.clock_epoch == st.epoch ? entry.clock : 0;
    if (clock + staleness < st.batches)
      return false;
  }
  return true;
}

/// What the worker does now, for the stall watch: whose frames or drains it waits for when
/// parked or done with its share.
worker_activity activity_of(const trainer_state& st, const trainer_setup& setup) {
  worker_activity activity;
  activity.worker = setup.worker;
  activity.round = st.epoch;
  activity.steps = st.batches;
  activity.waiting = st.waiting;
  activity.finished = st.finished;
  if (!st.waiting && !st.finished)
    return activity;
  for (const auto& entry : st.origins) {
    if (!entry.member || entry.drained > st.epoch)
      continue;
    const std::uint64_t clock = entry.clock_epoch == st.epoch ? entry.clock : 0;
    if (st.finished || clock + setup.staleness < st.batches)
      activity.waiting_for.push_back(entry.origin);
  }
  return activity;
}

/// Whether the next step may run: the staleness bound and the average it waits for allow it
/// (a round cut short ends without its open average, which may never complete).
bool ready(const trainer_state& st, const trainer_setup& setup) {
  return may_step(st, setup.staleness) && (st.cut || average_ready(st, setup));
}

/// Waits up to the setup's park_spin, yielding, for a message to a parked trainer, which then
/// handles it without its thread having blocked; called last in a handler.
void linger_if_parked(self_ptr self, const trainer_setup& setup) {
  if (!self->state.waiting || setup.park_spin <= caf::timespan::zero())
    return;
  const auto until = std::chrono::steady_clock::now() + setup.park_spin;
  while (self->mailbox().empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
}

/// Resumes a parked step once the bound allows it. The step goes to the back of the mailbox,
/// behind frames that are already queued.
void resume_if_allowed(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  if (st.waiting && ready(st, setup)) {
    st.waiting = false;
    self->send(self, step_atom_v);
  }
}

/// Moves the clock of the origin of a frame of `header`: it computed that many updates.
void note_progress(self_ptr self, const trainer_setup& setup, const compute::frame_header& header) {
  auto& st = self->state;
  auto& from = origin_entry(st, header.origin_node);
  // Frames of a round all arrive before that origin's drain marker, and the next round
  // starts only after every drain: a newer round restarts the clock.
  if (from.clock_epoch != header.epoch) {
    from.clock_epoch = header.epoch;
    from.clock = 0;
  }
  from.clock = std::max(from.clock, header.iteration);
  resume_if_allowed(self, setup);
}

/// Answers the supervisor once for the current round when every member origin drained it.
/// The trainer's own node is a member, so this happens only after its own partition is done.
void report_drain_when_done(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  if (st.drain_reported > st.epoch)
    return;
  const bool all_drained =
    std::all_of(st.origins.begin(), st.origins.end(), [&](const origin_progress& entry) {
      return !entry.member || entry.drained > st.epoch;
    });
  if (!all_drained)
    return;
  st.drain_reported = st.epoch + 1;
  self->send(setup.supervisor, drain_report{setup.worker, st.epoch, st.updates_applied,
                                            st.duplicate_updates_applied, st.frames_rejected});
}

/// Counts an origin's round as drained.
void take_drain(self_ptr self, const trainer_setup& setup, const drain_marker& marker) {
  auto& st = self->state;
  auto& from = origin_entry(st, marker.origin);
  if (from.drained > marker.epoch)
    return;  // seen before
  from.drained = marker.epoch + 1;
  resume_if_allowed(self, setup);
  if (marker.epoch == st.epoch)
    report_drain_when_done(self, setup);
}

/// Stops waiting for a lost origin: its frames and drains no longer hold back this round.
void forget(self_ptr self, const trainer_setup& setup, std::uint64_t origin) {
  auto& st = self->state;
  origin_entry(st, origin).member = false;
  resume_if_allowed(self, setup);
  if (origin_entry(st, setup.framer->node_id()).drained > st.epoch)
    report_drain_when_done(self, setup);
}

/// Starts round `round` over `order`; `origins` (when given) are the round's members.
void start_round(self_ptr self, const trainer_setup& setup, std::uint32_t round,
                 std::vector<std::uint32_t> order, const std::vector<std::uint64_t>* origins) {
  auto& st = self->state;
  if (origins) {
    for (auto& entry : st.origins)
      entry.member = false;
    st.other_nodes = false;
    for (const auto origin : *origins) {
      origin_entry(st, origin).member = true;
      st.other_nodes |= origin != setup.framer->node_id();
    }
  }
  st.cut = false;
  if (st.loader)
    st.loader->reset(std::move(order));
  else
    st.loader =
      std::make_unique<compute::batch_loader>(*setup.train, std::move(order), setup.batch_size);
  st.epoch = round;
  if (std::holds_alternative<kvstore_worker_state>(st.mode))
    begin_kv_round(self);
  st.waiting = false;
  st.finished = false;
  st.parked_at.reset();
  st.loss_sum = 0.0;
  st.batches = 0;
  st.samples = 0;
  st.unreported = step_report{setup.worker, round};
  st.reported_at = self->clock().now();
  self->send(self, step_atom_v);
}

/// Sends the progress not yet reported, if any.
void report_steps(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  st.reported_at = self->clock().now();
  if (st.unreported.batches == 0)
    return;
  self->send(setup.supervisor, st.unreported);
  st.unreported = step_report{setup.worker, st.epoch};
}

/// Whether the trainer is the round's only worker: no sibling on its node, no other node.
bool alone(const trainer_state& st) { return st.siblings.empty() && !st.other_nodes; }

/// The step of a worker alone in its round (no sibling on its node, no other node): it trains
/// as a worker alone does (train_step), with no frame and no residual; a round that has others
/// (a node joined) frames every update again.
void solo_step(self_ptr self, const trainer_setup& setup, const compute::batch& batch,
               step_spans& spans) {
  auto& st = self->state;
  auto& replica = *setup.replica;
  const float loss = compute_step(
    self, setup, [&] { return replica.train_step(batch.features, batch.labels, batch.size); });
  spans.mark(timeline_kind::forward_backward);
  auto& own = origin_entry(st, setup.framer->node_id());
  own.clock_epoch = st.epoch;  // its replica holds its update: its clock moves on
  own.clock = st.batches + 1;
  count_step(self, setup, loss, batch.size);
}

} // namespace

compute::encoded_update empty_update(std::size_t elements, float threshold) {
  return compute::encoded_update{compute::encoding::threshold, threshold, elements, 0, {}};
}

framed_update frame_own(trainer_state& st, const trainer_setup& setup,
                        const compute::encoded_update& update) {
  auto framed = setup.framer->frame(setup.worker, st.epoch, update);
  if (!framed)
    throw std::logic_error(framed.err().message);
  return std::move(*framed);
}

void note_applied(self_ptr self, const trainer_setup& setup, const compute::frame_header& header) {
  auto& st = self->state;
  ++st.updates_applied;
  if (!st.applied.insert(header.origin_node, header.sequence)) {
    ++st.duplicate_updates_applied;
    return;
  }
  note_progress(self, setup, header);
}

void take(self_ptr self, const trainer_setup& setup, const shared_frame& incoming) {
  auto& st = self->state;
  step_spans spans{setup.track.get(), self->clock()};
  auto view = compute::read_update_frame(incoming.value, st.workspace);
  auto applied = !view                      ? view.err()
                 : is_own(view->header, setup) ? success()
                 : compute::apply_update_frame(*view, setup.replica->net().parameters());
  if (!applied) {
    ++st.frames_rejected;
    log::warning("trainer {}: dropped a frame: {}", setup.worker, applied.err().message);
    // Where its header can be read, the origin did compute that step, and nothing will send
    // its update again. Waiting for it would stall a synchronous job for good once two frames
    // of one origin in a row are refused (strom sim's corrupt_frames found it).
    if (const auto header =
          view ? result<compute::frame_header>{view->header}
               : compute::read_update_frame_header(incoming.value))
      note_progress(self, setup, *header);
    return;
  }
  spans.mark(timeline_kind::apply, view->header.origin_node);
  if (setup.meter && !is_own(view->header, setup))
    setup.meter->frame_applied();
  note_applied(self, setup, view->header);
}

void report_round_end(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  warn_if_drifting(self, setup);
  self->send(setup.supervisor, epoch_report{setup.worker, st.epoch, st.loss_sum, st.batches,
                                            st.samples, setup.replica->iteration()});
  if (setup.framer->finish(setup.worker)) {
    const drain_marker marker{setup.framer->node_id(), st.epoch};
    send_to_others(self, setup, marker);
    take_drain(self, setup, marker);
  }
}

void count_step(self_ptr self, const trainer_setup& setup, float loss, std::size_t samples) {
  auto& st = self->state;
  st.loss_sum += loss;
  ++st.batches;
  st.samples += samples;
  ++st.unreported.batches;
  st.unreported.loss_sum += loss;
  st.unreported.samples += samples;
  if (self->clock().now() - st.reported_at >= step_report_interval)
    report_steps(self, setup);
  self->send(self, step_atom_v);
}

} // namespace strom::actors::trainer_steps

namespace strom::actors {

using namespace trainer_steps;

caf::behavior trainer(caf::stateful_actor<trainer_state>* self, trainer_setup setup) {
  self->set_exception_handler(
    [](caf::scheduled_actor*, std::exception_ptr& failure) { return describe(failure); });
  if (setup.origins.empty() || !setup.framer) {
    self->quit(caf::make_error(caf::sec::invalid_argument,
                               setup.framer ? "trainer: no origins to train with"
                                            : "trainer: no node framer to frame updates with"));
    return {};
  }
  for (const auto origin : setup.origins) {
    self->state.origins.push_back(origin_progress{origin});
    self->state.other_nodes |= origin != setup.framer->node_id();
  }
  auto encoding = setup.encoding;
  encoding.blocks = compute::parameter_blocks(setup.replica->net());
  self->state.update_scale = update_scale(setup.workers_in_job, setup.update_power);
  self->state.encoder.emplace(setup.replica->net().parameters().size(), std::move(encoding));
  if (!setup.kv.shards.empty())
    start_kv(self, setup);
  else if (setup.averaging.frequency > 0)
    start_averaging(self, setup);
  else
    start_sharing(self, setup);
  return {
    [self](siblings_atom, const caf::actor& sibling) {
      self->state.siblings.push_back(caf::actor_cast<trainer_sibling_actor>(sibling));
    },
    [self, setup](start_atom, std::uint32_t epoch) {
      if (std::holds_alternative<averaging_worker_state>(self->state.mode)) {
        // The averages need every worker's rounds alike.
        self->quit(caf::make_error(caf::sec::invalid_argument,
                                   "trainer: parameter averaging needs rounds a job_master plans"));
        return;
      }
      start_round(self, setup, epoch,
                  compute::epoch_order(setup.share, setup.seed, epoch, setup.shuffle), nullptr);
    },
    [self, setup](round_work& work) {
      auto order = work.ranks == 0
                     ? std::move(work.indices)
                     : compute::epoch_order(
                         compute::partition(setup.train->size(), work.rank, work.ranks),
                         setup.seed, work.epoch, setup.shuffle);
      auto& st = self->state;
      st.most_steps = work.most_steps;
      if (work.ranks > 0)  // a makeup round keeps the last count
        st.update_scale = update_scale(work.ranks, setup.update_power);
      begin_averaging_round(self, work);
      start_round(self, setup, work.round, std::move(order), &work.origins);
    },
    [self, setup](forget_atom, std::uint64_t origin) {
      forget(self, setup, origin);
      linger_if_parked(self, setup);
    },
    [self](cut_atom, std::uint32_t round) {
      auto& st = self->state;
      if (round != st.epoch || st.cut)
        return;
      st.cut = true;
      if (st.waiting) {  // a parked step ends the round now
        st.waiting = false;
        self->send(self, step_atom_v);
      }
    },
    [self, setup](restore_atom, const assembled_snapshot& snapshot) -> caf::result<bool> {
      if (auto err = restore_from(self->state, setup, snapshot))
        return err;
      return true;
    },
    [self, setup](step_atom) {
      auto& st = self->state;
      if (!ready(st, setup)) {
        st.waiting = true;
        if (setup.track && !st.parked_at) {
          st.parked_at = self->clock().now();
          const auto holding = activity_of(st, setup).waiting_for;
          st.parked_for = holding.empty() ? 0 : holding.front();
        }
        linger_if_parked(self, setup);
        return;
      }
      if (setup.track && st.parked_at) {
        setup.track->span(timeline_kind::wait, *st.parked_at, self->clock().now(),
                          st.parked_for);
        st.parked_at.reset();
      }
      step_spans spans{setup.track.get(), self->clock()};
      take_average(self, setup);
      const auto* batch = st.cut ? nullptr : st.loader->next();
      spans.mark(timeline_kind::batch);
      const bool kvstore = std::holds_alternative<kvstore_worker_state>(st.mode);
      if (!batch) {
        setup.replica->finish_epoch();
        st.finished = true;
        report_steps(self, setup);
        if (kvstore)  // the node's pushes stop waiting for it; it reports the end itself
          return finish_kv_round(self, setup);
        return report_round_end(self, setup);
      }
      // The step strategy of the job's mode; a worker alone in its round shares nothing.
      if (kvstore)
        return kv_step(self, setup, *batch);
      if (alone(st))
        return solo_step(self, setup, *batch, spans);
      if (std::holds_alternative<averaging_worker_state>(st.mode))
        return averaging_step(self, setup, *batch, spans);
      sharing_step(self, setup, *batch, spans);
    },
    [self, setup](const shared_frame& incoming) {
      take(self, setup, incoming);
      linger_if_parked(self, setup);
    },
    [self, setup](const drain_marker& marker) {
      take_drain(self, setup, marker);
      linger_if_parked(self, setup);
    },
    [self, setup](const average_total& total) {
      if (!take_total(self, setup, total))
        return;
      resume_if_allowed(self, setup);
      linger_if_parked(self, setup);
    },
    [self, setup](const kv_reroute& reroute) { reroute_pushes(self, setup, reroute); },
    [self, setup](const kv_local_step& step) { take_local_step(self, setup, step); },
    [self, setup](const kv_done& done) { take_local_done(self, setup, done); },
    [self, setup](const kv_local_answer& answer) { take_local_answer(self, setup, answer); },
    [self, setup](kv_pull_atom) { return pull_latest(self, setup); },
    [self, setup](stall_atom) {
      auto activity = activity_of(self->state, setup);
      linger_if_parked(self, setup);
      return activity;
    },
    [self, setup](snapshot_atom, const caf::actor& receiver) -> caf::result<snapshot_sent> {
      step_spans spans{setup.track.get(), self->clock()};
      auto sent = send_snapshot(self, setup, receiver);
      spans.mark(timeline_kind::snapshot);
      linger_if_parked(self, setup);
      return sent;
    },
  };
}

} // namespace strom::actors
