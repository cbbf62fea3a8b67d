#pragma once
// The trainer's steps shared by the files that make it up: its loop in trainer.cpp (rounds,
// frames and the clocks they carry, the step of a worker alone) and one file per mode for the
// step a worker takes with others: trainer_sharing.cpp (threshold-encoded updates),
// trainer_averaging.cpp (parameter averaging) and trainer_kv.cpp (parameter servers).
// Internal to those files.

#include <thread>

#include <caf/all.hpp>

#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/actors/worker/trainer.hpp"

namespace strom::actors::trainer_steps {

using self_ptr = caf::stateful_actor<trainer_state>*;

// -- trainer.cpp ------------------------------------------------------------------------------

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
compute::encoded_update empty_update(std::size_t elements, float threshold);

/// Frames `update` of this worker; its own frame always fits its own node, so a refusal is a
/// broken invariant.
framed_update frame_own(trainer_state& st, const trainer_setup& setup,
                        const compute::encoded_update& update);

/// Hands a frame or drain marker of this worker to the node's other trainers first (they may
/// be waiting for it), then to the relay for the other nodes (if any).
template <class Message>
void send_to_others(self_ptr self, const trainer_setup& setup, const Message& message) {
  for (const auto& sibling : self->state.siblings)
    self->send(sibling, message);
  if (self->state.other_nodes)
    self->send(setup.relay, publish_atom_v, message);
}

/// Counts a frame of `header` as applied (or as a duplicate) and moves its origin's clock.
void note_applied(self_ptr self, const trainer_setup& setup, const compute::frame_header& header);

/// Applies a frame of another worker of this node or of another node's relay (or this
/// worker's own, when it applies itself only through its frames).
void take(self_ptr self, const trainer_setup& setup, const shared_frame& incoming);

/// Counts a step taken (its loss and samples), reports progress now and then, and queues the
/// next step behind any frames that arrived meanwhile (they are applied first).
void count_step(self_ptr self, const trainer_setup& setup, float loss, std::size_t samples);

/// Runs a step's computation (forward and backward, or a whole train_step) and returns its
/// loss; on a node with a speed factor below 1 it then waits as the slower node would
/// (compute_slowdown.hpp). The one place the testing aid touches the trainer.
template <class Computation>
float compute_step(self_ptr self, const trainer_setup& setup, Computation&& computation) {
  if (setup.meter) {
    // A simulation charges the step to the node's virtual time, at the node's speed.
    const float loss = computation();
    setup.meter->step_computed();
    return loss;
  }
  const double speed = setup.speed.at(setup.replica->epoch());
  if (speed >= full_speed)
    return computation();
  const auto start = self->clock().now();
  const float loss = computation();
  // Blocking, as the slower machine's computation would: the trainer is a detached actor.
  std::this_thread::sleep_for(slowdown_wait(speed, self->clock().now() - start));
  return loss;
}

/// The worker's part of the round is over: its epoch_report to the supervisor and, from the
/// node's last worker, the drain marker.
void report_round_end(self_ptr self, const trainer_setup& setup);

// -- trainer_sharing.cpp ----------------------------------------------------------------------

/// Sets up sharing mode's state: the model's tensors, to report the encoder's figures by.
void start_sharing(self_ptr self, const trainer_setup& setup);

/// A step of gradient sharing on `batch`: the update, encoded against the worker's residual,
/// goes out as a frame to the node's other trainers and the relay (trainer.hpp).
void sharing_step(self_ptr self, const trainer_setup& setup, const compute::batch& batch,
                  step_spans& spans);

/// Says once, in the log, when what this worker has not sent yet (its residual, by which
/// the others' replicas differ from its own) holds more steps of its updates than
/// max_lag_steps: sharing then lags the training, and replicas drift apart.
void warn_if_drifting(self_ptr self, const trainer_setup& setup);

// -- trainer_averaging.cpp --------------------------------------------------------------------

/// Sets up averaging mode's state.
void start_averaging(self_ptr self, const trainer_setup& setup);

/// A round the job_master planned begins: the averages of earlier rounds are dropped.
void begin_averaging_round(self_ptr self, const round_work& work);

/// Whether the average the next step waits for (if any) is complete; true outside averaging.
bool average_ready(const trainer_state& st, const trainer_setup& setup);

/// Continues from the average the step waited for, if it came; a round cut short ends
/// without it. Nothing outside averaging.
void take_average(self_ptr self, const trainer_setup& setup);

/// A step of parameter averaging on `batch` (parameter_averaging.hpp).
void averaging_step(self_ptr self, const trainer_setup& setup, const compute::batch& batch,
                    step_spans& spans);

/// Keeps an average's total from the relay: true once kept (a parked step may resume); a
/// total outside averaging or refused (counted and logged) is dropped.
bool take_total(self_ptr self, const trainer_setup& setup, const average_total& total);

// -- trainer_kv.cpp ---------------------------------------------------------------------------

/// Sets up kvstore mode's state: the node's first trainer pushes for the node.
void start_kv(self_ptr self, const trainer_setup& setup);

/// A step of a kvstore worker on `batch`: its gradient goes into the node's push (the node's
/// first trainer pushes once every worker of the node added its own); the next step is queued
/// once the shards' answers are in its replica.
void kv_step(self_ptr self, const trainer_setup& setup, const compute::batch& batch);

/// The worker trained its part of the round: the node's push waits for it no longer, and once
/// the whole node is done (and joined the round's later steps, dist_sync) the shards are told
/// (kv_done). It reports the round's end (report_round_end) at once, or the node's first
/// trainer once the node is through, so that the next round finds every answer taken.
void finish_kv_round(self_ptr self, const trainer_setup& setup);

/// A new round begins: the node's first trainer forgets the rounds before it.
void begin_kv_round(self_ptr self);

/// The node's first trainer: slot `step.slot` added its gradient of a step.
void take_local_step(self_ptr self, const trainer_setup& setup, const kv_local_step& step);

/// The node's first trainer: a worker of the node finished a round.
void take_local_done(self_ptr self, const trainer_setup& setup, const kv_done& done);

/// A worker whose gradient the node's push carried: one range's answer.
void take_local_answer(self_ptr self, const trainer_setup& setup, const kv_local_answer& answer);

/// New heads for key ranges whose server was lost: what they did not answer goes to them
/// (the node's first trainer; the others push nothing).
void reroute_pushes(self_ptr self, const trainer_setup& setup, const kv_reroute& reroute);

/// The node's first trainer, before its replica is evaluated or checkpointed: takes every key
/// range's latest parameters and updater state from the shards into the replica (so that its
/// checkpoint holds the server optimizer's state), and answers once they are in.
/// A replica holds the parameters of the last step it carried; steps of the node's other
/// workers or of other nodes after it moved the shards' model on. A range whose head was lost
/// is pulled from its re-routed head. Answers at once where the shards hold no parameters
/// (serverOptimizer false) or the job is not in kvstore mode.
caf::result<kv_pull_atom> pull_latest(self_ptr self, const trainer_setup& setup);

} // namespace strom::actors::trainer_steps
