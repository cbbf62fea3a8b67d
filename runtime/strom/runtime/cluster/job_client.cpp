#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/cluster/job_follower.hpp"

#include <fmt/format.h>

#include <optional>

#include "strom/actors/messages.hpp"
#include "strom/actors/error_text.hpp"
#include "strom/log.hpp"
#include "strom/runtime/interruptible_wait.hpp"

namespace strom::runtime {

namespace {

/// Sends `request` to the scheduler (which `self` monitors) and waits for its Reply, at most
/// limits.answer. A plain send, not a request: the wait must look for stop signals, and the
/// scheduler answers the sender either way.
template <class Reply, class... Request>
result<Reply> ask(caf::scoped_actor& self, const caf::actor& scheduler,
                  const client_limits& limits, on_stop stop, Request&&... request) {
  std::optional<result<Reply>> outcome;
  self->send(scheduler, std::forward<Request>(request)...);
  const auto end = receive_until(
    self, limits.answer, stop, [&] { return outcome.has_value(); },
    [&](const Reply& reply) { outcome = reply; },
    [&](caf::error& err) {
      outcome = error{"the scheduler answered with an error: "
                      + actors::error_text(self->system(), err)};
    },
    [&](const caf::down_msg& down) {
      if (down.source == scheduler.address())
        outcome = error{"lost the scheduler: " + actors::error_text(self->system(), down.reason)};
    });
  if (end == wait_end::interrupted)
    return error{"interrupted before the scheduler answered"};
  if (end == wait_end::silent)
    return error{fmt::format("no answer from the scheduler within {:g} s",
                             std::chrono::duration<double>(limits.answer).count())};
  return std::move(*outcome);
}

/// Sends a submission, an attach or a cancel and returns the accepted job id.
template <class... Request>
result<std::uint64_t> ask_for_job(caf::scoped_actor& self, const caf::actor& scheduler,
                                  const client_limits& limits, on_stop stop,
                                  Request&&... request) {
  auto reply = ask<actors::submit_reply>(self, scheduler, limits, stop,
                                         std::forward<Request>(request)...);
  if (!reply)
    return reply.err();
  if (!reply->accepted)
    return error{"the scheduler refused: " + reply->reason};
  return reply->job_id;
}

/// Waits for the end of `job_id`, passing its progress to `observer`; nullopt when a stop
/// signal ended the wait first. A lost scheduler that `reconnect` reaches again is asked to
/// attach this client again (the old connection's messages are gone with it); `scheduler`
/// is the new one then.
std::optional<result<training_report>> follow(caf::scoped_actor& self, caf::actor& scheduler,
                                              std::uint64_t job_id, training_observer* observer,
                                              const client_limits& limits,
                                              const scheduler_reconnector& reconnect) {
  job_follower job{job_id, observer};
  const auto& outcome = job.outcome();
  for (;;) {
    std::optional<std::string> lost;
    const auto end = receive_until(
      self, limits.silence, on_stop::end_wait, [&] { return outcome || lost; },
      [&](const actors::job_progress& p) { job.on(p); },
      [&](const actors::job_epoch& e) { job.on(e); },
      [&](const actors::job_finished& done) { job.on(done); },
      [&](const caf::down_msg& down) {
        if (down.source == scheduler.address())
          lost = actors::error_text(self->system(), down.reason);
      });
    if (end == wait_end::interrupted)
      return std::nullopt;
    if (end == wait_end::silent)
      return error{fmt::format("no word about job {} from the scheduler for {} s", job_id,
                               std::chrono::duration_cast<std::chrono::seconds>(limits.silence)
                                 .count())};
    if (outcome || !lost)
      return outcome;
    const auto lost_error = [&](const std::string& why) {
      return error{fmt::format("lost the scheduler while following job {}: {}", job_id, why)};
    };
    if (!reconnect)
      return lost_error(*lost);
    log::warning("lost the scheduler while following job {} ({}); connecting again", job_id,
                 *lost);
    auto again = reconnect();
    if (!again)
      return lost_error(*lost + "; not reached again: " + again.err().message);
    scheduler = std::move(*again);
    self->monitor(scheduler);
    auto attached = ask_for_job(self, scheduler, limits, on_stop::end_wait, actors::attach_atom_v,
                                job_id);
    if (!attached)
      return lost_error(*lost + "; attaching again failed: " + attached.err().message);
  }
}

} // namespace

result<std::uint64_t> submit_job(caf::actor_system& system, const caf::actor& scheduler,
                                 const actors::job_submission& submission,
                                 const client_limits& limits) {
  caf::scoped_actor self{system};
  self->monitor(scheduler);
  // Not interruptible: a submission the scheduler accepted after the client gave up would
  // run with nobody knowing its id. The answer comes within limits.answer.
  return ask_for_job(self, scheduler, limits, on_stop::keep_waiting, actors::submit_atom_v,
                     submission);
}

result<training_report> run_job(caf::actor_system& system, const caf::actor& scheduler,
                                const actors::job_submission& submission,
                                training_observer* observer, const client_limits& limits,
                                const scheduler_reconnector& reconnect) {
  caf::scoped_actor self{system};
  self->monitor(scheduler);
  auto job_id = ask_for_job(self, scheduler, limits, on_stop::keep_waiting, actors::submit_atom_v,
                            submission);
  if (!job_id)
    return job_id.err();
  auto current = scheduler;
  if (auto outcome = follow(self, current, *job_id, observer, limits, reconnect))
    return std::move(*outcome);
  // The job was started for this client alone: it must not run on once the client stops.
  auto cancelled = ask_for_job(self, current, limits, on_stop::keep_waiting,
                               actors::cancel_atom_v, *job_id);
  if (!cancelled)
    return error{fmt::format("interrupted: could not cancel job {}: {}", *job_id,
                             cancelled.err().message)};
  return error{fmt::format("interrupted: cancelled job {}", *job_id)};
}

result<training_report> attach_job(caf::actor_system& system, const caf::actor& scheduler,
                                   std::uint64_t job_id, training_observer* observer,
                                   const client_limits& limits,
                                   const scheduler_reconnector& reconnect) {
  caf::scoped_actor self{system};
  self->monitor(scheduler);
  auto accepted = ask_for_job(self, scheduler, limits, on_stop::end_wait, actors::attach_atom_v,
                              job_id);
  if (!accepted)
    return accepted.err();
  auto current = scheduler;
  if (auto outcome = follow(self, current, job_id, observer, limits, reconnect))
    return std::move(*outcome);
  return error{fmt::format("interrupted: detached from job {}, which keeps running", job_id)};
}

result<void> cancel_job(caf::actor_system& system, const caf::actor& scheduler,
                        std::uint64_t job_id, const client_limits& limits) {
  caf::scoped_actor self{system};
  self->monitor(scheduler);
  auto cancelled = ask_for_job(self, scheduler, limits, on_stop::end_wait, actors::cancel_atom_v,
                               job_id);
  if (!cancelled)
    return cancelled.err();
  return success();
}

result<actors::cluster_status> query_status(caf::actor_system& system, const caf::actor& scheduler,
                                            const client_limits& limits) {
  caf::scoped_actor self{system};
  self->monitor(scheduler);
  return ask<actors::cluster_status>(self, scheduler, limits, on_stop::end_wait,
                                     actors::status_atom_v);
}

} // namespace strom::runtime
