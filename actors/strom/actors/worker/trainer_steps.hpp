#pragma once
// The trainer's steps shared by the files that make it up: trainer.cpp (steps, frames,
// rounds) and trainer_kv.cpp (kvstore mode's pushes and answers). Internal to those files.

#include <thread>

#include <caf/all.hpp>

#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/actors/worker/trainer.hpp"

namespace strom::actors::trainer_steps {

using self_ptr = caf::stateful_actor<trainer_state>*;

// -- trainer.cpp ------------------------------------------------------------------------------

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
/// range's latest parameters from the shards into the replica, and answers once they are in.
/// A replica holds the parameters of the last step it carried; steps of the node's other
/// workers or of other nodes after it moved the shards' model on. A range whose head was lost
/// is pulled from its re-routed head. Answers at once where the shards hold no parameters
/// (serverOptimizer false) or the job is not in kvstore mode.
caf::result<kv_pull_atom> pull_latest(self_ptr self, const trainer_setup& setup);

} // namespace strom::actors::trainer_steps
