#include "strom/runtime/job_client.hpp"

#include <fmt/format.h>

#include <optional>

#include "strom/actors/error_text.hpp"

namespace strom::runtime {

namespace {

/// Sends `request` (a submission or an attach) and returns the accepted job id.
template <class... Request>
result<std::uint64_t> ask_for_job(caf::scoped_actor& self, const caf::actor& scheduler,
                                  const client_limits& limits, Request&&... request) {
  result<std::uint64_t> outcome = error{"no answer"};
  self->request(scheduler, limits.answer, std::forward<Request>(request)...)
    .receive(
      [&](const actors::submit_reply& reply) {
        if (reply.accepted)
          outcome = reply.job_id;
        else
          outcome = error{"the scheduler refused: " + reply.reason};
      },
      [&](caf::error& err) {
        outcome = error{"no answer from the scheduler: " + actors::error_text(self->system(), err)};
      });
  return outcome;
}

/// Waits for the end of `job_id`, passing its progress to `observer`.
result<training_report> follow(caf::scoped_actor& self, const caf::actor& scheduler,
                               std::uint64_t job_id, training_observer* observer,
                               const client_limits& limits) {
  training_observer silent;
  auto& watcher = observer ? *observer : silent;
  std::optional<result<training_report>> outcome;
  self->receive_while([&] { return !outcome; })(
    [&](const actors::job_progress& p) {
      if (p.job_id == job_id)
        watcher.on_step(p.progress);
    },
    [&](const actors::job_epoch& e) {
      if (e.job_id == job_id)
        watcher.on_epoch(e.summary);
    },
    [&](const actors::job_finished& done) {
      if (done.job_id != job_id)
        return;
      if (done.succeeded)
        outcome = done.report;
      else
        outcome = error{fmt::format("job {} failed: {}", job_id, done.failure)};
    },
    [&](const caf::down_msg& down) {
      if (down.source == scheduler.address())
        outcome = error{fmt::format("lost the scheduler while following job {}: {}", job_id,
                                    actors::error_text(self->system(), down.reason))};
    },
    caf::after(limits.silence) >> [&] {
      outcome = error{fmt::format("no word about job {} from the scheduler for {} s", job_id,
                                  std::chrono::duration_cast<std::chrono::seconds>(limits.silence)
                                    .count())};
    });
  return std::move(*outcome);
}

} // namespace

result<std::uint64_t> submit_job(caf::actor_system& system, const caf::actor& scheduler,
                                 const actors::job_submission& submission,
                                 const client_limits& limits) {
  caf::scoped_actor self{system};
  return ask_for_job(self, scheduler, limits, actors::submit_atom_v, submission);
}

result<training_report> run_job(caf::actor_system& system, const caf::actor& scheduler,
                                const actors::job_submission& submission,
                                training_observer* observer, const client_limits& limits) {
  caf::scoped_actor self{system};
  self->monitor(scheduler);
  auto job_id = ask_for_job(self, scheduler, limits, actors::submit_atom_v, submission);
  if (!job_id)
    return job_id.err();
  return follow(self, scheduler, *job_id, observer, limits);
}

result<training_report> attach_job(caf::actor_system& system, const caf::actor& scheduler,
                                   std::uint64_t job_id, training_observer* observer,
                                   const client_limits& limits) {
  caf::scoped_actor self{system};
  self->monitor(scheduler);
  auto accepted = ask_for_job(self, scheduler, limits, actors::attach_atom_v, job_id);
  if (!accepted)
    return accepted.err();
  return follow(self, scheduler, job_id, observer, limits);
}

result<actors::cluster_status> query_status(caf::actor_system& system, const caf::actor& scheduler,
                                            const client_limits& limits) {
  caf::scoped_actor self{system};
  result<actors::cluster_status> outcome = error{"no answer"};
  self->request(scheduler, limits.answer, actors::status_atom_v)
    .receive([&](const actors::cluster_status& status) { outcome = status; },
             [&](caf::error& err) {
               outcome = error{"no answer from the scheduler: "
                               + actors::error_text(self->system(), err)};
             });
  return outcome;
}

} // namespace strom::runtime
