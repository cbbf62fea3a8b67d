#include "strom/actors/worker/trainer.hpp"
#include "strom/actors/worker/trainer_snapshot.hpp"
#include "strom/actors/worker/trainer_steps.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <thread>

#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/codecs/sent_elements.hpp"
#include "strom/compute/parameter_blocks.hpp"
#include "strom/log.hpp"

namespace strom::actors {

using namespace trainer_steps;

namespace {

/// Consecutive spans of one step on the worker's timeline track; without a track each mark
/// is one branch.
class step_spans {
public:
  step_spans(timeline_track* track, caf::actor_clock& clock) : track_(track), clock_(clock) {
    if (track_)
      start_ = clock_.now();
  }

  /// Ends the span of `kind` now; the next starts here.
  void mark(timeline_kind kind, std::uint64_t detail = 0) {
    if (!track_)
      return;
    const auto now = clock_.now();
    track_->span(kind, start_, now, detail);
    start_ = now;
  }

private:
  timeline_track* track_;
  caf::actor_clock& clock_;
  caf::actor_clock::time_point start_{};
};

/// The update of a step that sends nothing: a header-only frame, which still moves the clock.
compute::encoded_update empty_update(std::size_t elements, float threshold) {
  return compute::encoded_update{compute::encoding::threshold, threshold, elements, 0, {}};
}

/// What each update is multiplied by among `workers` (trainer_setup::update_power).
float update_scale(std::uint32_t workers, float power) {
  return static_cast<float>(std::pow(static_cast<double>(std::max(workers, 1u)),
                                     -static_cast<double>(power)));
}

/// Frames `update` of this worker; its own frame always fits its own node, so a refusal is a
/// broken invariant.
framed_update frame_own(trainer_state& st, const trainer_setup& setup,
                        const compute::encoded_update& update) {
  auto framed = setup.framer->frame(setup.worker, st.epoch, update);
  if (!framed)
    throw std::logic_error(framed.err().message);
  return std::move(*framed);
}

/// Hands the encoder's per-tensor figures to the node's framer (tensor_sharing.hpp).
void publish_tensors(trainer_state& st, const trainer_setup& setup) {
  describe_tensors(st.encoder->figures(), st.tensors, st.tensor_figures);
  setup.framer->note_tensors(setup.worker, st.tensor_figures);
}

/// This step's update as the change to add (its negation), encoded against the worker's
/// residual and framed by the node; a header-only frame when nothing reached the threshold.
/// The updater computes the update in the encoder's pass over the residual, and a worker that
/// applies its own update at once applies it to its replica in that pass too. `sent` gets the
/// encoded update (for momentum masking after the frame is out).
framed_update frame_update(trainer_state& st, const trainer_setup& setup,
                           compute::replica& replica,
                           std::optional<compute::encoded_update>& sent, step_spans& spans) {
  const auto parameters = replica.net().parameters();
  const auto threshold = st.encoder->threshold();
  sent = st.encoder->encode_with(
    [&replica](const compute::threshold_scan_args& scan) { return replica.scan_update(scan); },
    -st.update_scale, setup.apply_own_update ? parameters : std::span<float>{});
  spans.mark(timeline_kind::encode);
  publish_tensors(st, setup);
  return frame_own(st, setup, sent ? *sent : empty_update(parameters.size(), threshold));
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
  if (st.kvstore)  // paced by the shards' answers (dist_sync), never by frames
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

/// Whether the average the next step waits for (if any) is complete: with other nodes in the
/// round, its total came from the relay; alone, every worker of this node added its own.
bool average_ready(const trainer_state& st, const trainer_setup& setup) {
  return !st.awaiting
         || (st.other_nodes ? st.averages->complete(*st.awaiting)
                            : setup.node_sums->complete({st.epoch, *st.awaiting}));
}

/// Whether the next step may run: the staleness bound and the average it waits for allow it
/// (a round cut short ends without its open average, which may never complete).
bool ready(const trainer_state& st, const trainer_setup& setup) {
  return may_step(st, setup.staleness) && (st.cut || average_ready(st, setup));
}

/// Waits up to the setup's park_spin, yielding, for a message to a parked trainer, which then
/// handles it without its thread having blocked; called last in a handler.
void linger_if_parked(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup) {
  if (!self->state.waiting || setup.park_spin <= caf::timespan::zero())
    return;
  const auto until = std::chrono::steady_clock::now() + setup.park_spin;
  while (self->mailbox().empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
}

/// Resumes a parked step once the bound allows it. The step goes to the back of the mailbox,
/// behind frames that are already queued.
void resume_if_allowed(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup) {
  auto& st = self->state;
  if (st.waiting && ready(st, setup)) {
    st.waiting = false;
    self->send(self, step_atom_v);
  }
}

/// Moves the clock of the origin of a frame of `header`: it computed that many updates.
void note_progress(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
                   const compute::frame_header& header) {
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

/// Counts a frame of `header` as applied (or as a duplicate) and moves its origin's clock.
void note_applied(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
                  const compute::frame_header& header) {
  auto& st = self->state;
  ++st.updates_applied;
  if (!st.applied.insert(header.origin_node, header.sequence)) {
    ++st.duplicate_updates_applied;
    return;
  }
  note_progress(self, setup, header);
}

/// Applies a frame of another worker of this node or of another node's relay (or this
/// worker's own, when it applies itself only through its frames).
void take(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
          const shared_frame& incoming) {
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

/// Answers the supervisor once for the current round when every member origin drained it.
/// The trainer's own node is a member, so this happens only after its own partition is done.
void report_drain_when_done(caf::stateful_actor<trainer_state>* self,
                            const trainer_setup& setup) {
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
void take(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
          const drain_marker& marker) {
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
void forget(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
            std::uint64_t origin) {
  auto& st = self->state;
  origin_entry(st, origin).member = false;
  resume_if_allowed(self, setup);
  if (origin_entry(st, setup.framer->node_id()).drained > st.epoch)
    report_drain_when_done(self, setup);
}

/// Starts round `round` over `order`; `origins` (when given) are the round's members.
void start_round(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
                 std::uint32_t round, std::vector<std::uint32_t> order,
                 const std::vector<std::uint64_t>* origins) {
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
  if (st.kv)
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

/// Hands a frame or drain marker of this worker to the node's other trainers first (they may
/// be waiting for it), then to the relay for the other nodes (if any).
template <class Message>
void send_to_others(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
                    const Message& message) {
  for (const auto& sibling : self->state.siblings)
    self->send(sibling, message);
  if (self->state.other_nodes)
    self->send(setup.relay, publish_atom_v, message);
}

/// Sends the progress not yet reported, if any.
void report_steps(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup) {
  auto& st = self->state;
  st.reported_at = self->clock().now();
  if (st.unreported.batches == 0)
    return;
  self->send(setup.supervisor, st.unreported);
  st.unreported = step_report{setup.worker, st.epoch};
}

/// Whether the trainer is the round's only worker: no sibling on its node, no other node.
/// It then trains as a worker alone does (train_step), with no frame and no residual; a
/// round that has others (a node joined) frames every update again.
bool alone(const trainer_state& st) { return st.siblings.empty() && !st.other_nodes; }

/// Continues from the average the step waited for, if it came; a round cut short ends
/// without it.
void take_average(trainer_state& st, const trainer_setup& setup) {
  if (!st.awaiting)
    return;
  const auto parameters = setup.replica->net().parameters();
  const auto updater_state =
    setup.averaging.updaters ? setup.replica->updater_state() : std::span<float>{};
  if (average_ready(st, setup)) {
    if (st.other_nodes)
      st.averages->take(*st.awaiting, parameters, updater_state);
    else
      take_average_of(std::as_bytes(setup.node_sums->sum({st.epoch, *st.awaiting})), parameters,
                      updater_state);
  }
  st.awaiting.reset();
}

/// Hands the node's complete sum of average `key` to the relay in segments, to be reduced
/// along the tree with the other nodes' (average_reduction.hpp).
void publish_sum(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
                 const average_key& key) {
  auto& st = self->state;
  std::vector<std::uint64_t> members;
  for (const auto& entry : st.origins)
    if (entry.member)
      members.push_back(entry.origin);
  const auto sum = setup.node_sums->sum(key);
  for (std::size_t offset = 0; offset < sum.size(); offset += average_segment_elements) {
    const compute::frame_header header{setup.framer->node_id(), setup.worker, key.index, 0,
                                       key.round, offset};
    const auto segment =
      sum.subspan(offset, std::min(average_segment_elements, sum.size() - offset));
    auto built = compute::build_update_frame(header, compute::dense_fp32_update(segment), {});
    if (!built)  // a segment is 1 MiB
      throw std::logic_error("trainer: its node's sum could not be framed: " + built.err().message);
    self->send(setup.relay, publish_atom_v,
               average_part{key.round, key.index, 0, members, shared_frame{std::move(*built)}});
  }
}

/// A step of parameter averaging: the worker trains alone and frames an empty update (its
/// clock), which also tells its siblings at an averaging step that it added its contribution
/// to its node's sum; the node's last worker to add publishes the sum to the relay when the
/// round has other nodes.
void averaging_step(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup,
                    const compute::batch& batch, step_spans& spans) {
  auto& st = self->state;
  auto& replica = *setup.replica;
  const float loss = compute_step(
    self, setup, [&] { return replica.train_step(batch.features, batch.labels, batch.size); });
  spans.mark(timeline_kind::forward_backward);
  if (contributes_at(st.batches + 1, st.common_steps, setup.averaging)) {
    const average_key key{st.epoch, st.averages->next_index()};
    st.awaiting = key.index;
    const bool last = setup.node_sums->add(
      key, replica.net().parameters(),
      setup.averaging.updaters ? replica.updater_state() : std::span<const float>{});
    if (last) {
      setup.framer->count_average();
      if (st.other_nodes)
        publish_sum(self, setup, key);
    }
  }
  auto own = frame_own(st, setup,
                       empty_update(replica.net().parameters().size(), st.encoder->threshold()));
  send_to_others(self, setup, shared_frame{std::move(own.frame)});
  spans.mark(timeline_kind::frame);
  note_applied(self, setup, own.header);
  count_step(self, setup, loss, batch.size);
}

/// Says once, in the log, when what this worker has not sent yet (its residual, by which
/// the others' replicas differ from its own) holds more steps of its updates than
/// max_lag_steps: sharing then lags the training, and replicas drift apart.
void warn_if_drifting(trainer_state& st, const trainer_setup& setup) {
  if (st.drift_warned || !st.encoder || st.tensor_figures.empty())
    return;
  st.encoder->measure_residual();
  publish_tensors(st, setup);
  const double lag = lag_steps(st.tensor_figures);
  log::debug("node {} worker {}: unsent updates hold {:.1f} steps", setup.framer->node_id(),
            setup.worker, lag);
  if (lag <= max_lag_steps)
    return;
  st.drift_warned = true;
  log::warning("node {} worker {}: the updates it has not sent yet hold {:.0f} of its steps "
              "(more than {:.0f}): the replicas drift apart; send more a step "
              "(distributed.sharing.threshold.calibrated.density)",
              setup.framer->node_id(), setup.worker, lag, max_lag_steps);
}

} // namespace

void trainer_steps::report_round_end(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  warn_if_drifting(st, setup);
  self->send(setup.supervisor, epoch_report{setup.worker, st.epoch, st.loss_sum, st.batches,
                                            st.samples, setup.replica->iteration()});
  if (setup.framer->finish(setup.worker)) {
    const drain_marker marker{setup.framer->node_id(), st.epoch};
    send_to_others(self, setup, marker);
    take(self, setup, marker);
  }
}

void trainer_steps::count_step(self_ptr self, const trainer_setup& setup, float loss,
                               std::size_t samples) {
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
  self->state.tensors = compute::model_tensors(setup.replica->net());
  self->state.update_scale = update_scale(setup.workers_in_job, setup.update_power);
  self->state.encoder.emplace(setup.replica->net().parameters().size(), std::move(encoding));
  if (!setup.kv.shards.empty())
    start_kv(self, setup);
  if (setup.averaging.frequency > 0)
    self->state.averages.emplace(contribution_elements(setup.replica->net().parameters().size(),
                                                       setup.replica->updater_state().size(),
                                                       setup.averaging));
  return {
    [self](siblings_atom, const caf::actor& sibling) {
      self->state.siblings.push_back(caf::actor_cast<trainer_sibling_actor>(sibling));
    },
    [self, setup](start_atom, std::uint32_t epoch) {
      if (self->state.averages) {  // the averages need every worker's rounds alike
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
      if (st.averages) {
        st.averages->start_round(work.round);
        st.common_steps = work.common_steps;
        st.awaiting.reset();
      }
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
      if (st.averages)
        take_average(st, setup);
      auto& replica = *setup.replica;
      const auto* batch = st.cut ? nullptr : st.loader->next();
      spans.mark(timeline_kind::batch);
      if (!batch) {
        replica.finish_epoch();
        st.finished = true;
        report_steps(self, setup);
        if (st.kvstore)  // the node's pushes stop waiting for it; it reports the end itself
          return finish_kv_round(self, setup);
        return report_round_end(self, setup);
      }
      if (st.kvstore)
        return kv_step(self, setup, *batch);
      if (alone(st)) {  // nobody to share with: the step a worker alone takes, no frame
        const float loss = compute_step(self, setup, [&] {
          return replica.train_step(batch->features, batch->labels, batch->size);
        });
        spans.mark(timeline_kind::forward_backward);
        auto& own = origin_entry(st, setup.framer->node_id());
        own.clock_epoch = st.epoch;  // its replica holds its update: its clock moves on
        own.clock = st.batches + 1;
        count_step(self, setup, loss, batch->size);
        return;
      }
      if (st.averages)
        return averaging_step(self, setup, *batch, spans);
      const float loss = compute_step(self, setup, [&] {
        return replica.compute_gradients(batch->features, batch->labels, batch->size);
      });
      spans.mark(timeline_kind::forward_backward);
      std::optional<compute::encoded_update> sent;
      auto own = frame_update(st, setup, replica, sent, spans);
      const shared_frame message{std::move(own.frame)};
      send_to_others(self, setup, message);
      spans.mark(timeline_kind::frame);
      // Its replica holds the update already, unless it applies itself only through frames.
      if (setup.apply_own_update)
        note_applied(self, setup, own.header);
      else
        take(self, setup, message);
      // Off the critical path: the frame is out. The payload stays valid until the next encode.
      if (const auto momentum = replica.momentum();
          sent && setup.momentum_masking && !momentum.empty())
        compute::clear_sent_elements(*sent, momentum);
      count_step(self, setup, loss, batch->size);
    },
    [self, setup](const shared_frame& incoming) {
      take(self, setup, incoming);
      linger_if_parked(self, setup);
    },
    [self, setup](const drain_marker& marker) {
      take(self, setup, marker);
      linger_if_parked(self, setup);
    },
    [self, setup](const average_total& total) {
      auto& st = self->state;
      if (!st.averages)
        return;
      if (auto kept = st.averages->add(total); !kept) {
        ++st.frames_rejected;
        log::warning("trainer {}: dropped a total: {}", setup.worker, kept.err().message);
        return;
      }
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
