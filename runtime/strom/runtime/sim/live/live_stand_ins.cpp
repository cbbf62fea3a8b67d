#include "strom/runtime/sim/live/live_stand_ins.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strom/actors/errors.hpp"
#include "strom/runtime/cluster/job_follower.hpp"
#include "strom/runtime/node/reconnect_pause.hpp"

namespace strom::runtime::sim {

namespace {

/// One line of the run's trace (ordered as written).
using trace_line = nlohmann::ordered_json;

} // namespace

caf::behavior node_daemon(caf::stateful_actor<node_daemon_state>* self, daemon_setup setup) {
  self->monitor(*setup.agent);
  self->set_down_handler([self, setup](const caf::down_msg& down) {
    const auto code = actors::strom_code_of(down.reason);
    if (down.source != setup.agent->address()
        || (code != actors::strom_error::scheduler_lost
            && code != actors::strom_error::scheduler_stopped))
      return;
    self->state.pause = first_reconnect_pause;
    self->state.lost_at = self->clock().now();
    self->delayed_send(self, self->state.pause, caf::tick_atom_v);
  });
  return {
    [self, setup](caf::tick_atom) {
      if (!*setup.scheduler) {
        if (self->clock().now() - self->state.lost_at >= setup.timeouts.reconnect_timeout)
          return self->quit();
        self->state.pause = next_reconnect_pause(self->state.pause);
        self->delayed_send(self, self->state.pause, caf::tick_atom_v);
        return;
      }
      *setup.agent = spawn_node(self->home_system(), *setup.scheduler, setup.identity,
                                setup.observer, setup.timeouts);
      self->monitor(*setup.agent);
    },
  };
}

caf::behavior live_client(caf::event_based_actor* self, caf::actor scheduler,
                          actors::job_submission submission, std::size_t nodes,
                          client_log* log, sim_trace* trace, training_observer* observer,
                          caf::timespan answer) {
  // Follows the job as `strom submit` does (job_follower.hpp), once it was accepted.
  auto job = std::make_shared<std::optional<job_follower>>();
  // Submits once the cluster's first nodes all joined, as `strom train --nodes` does.
  auto submit = [=] {
    self->request(scheduler, answer, actors::submit_atom_v, submission)
      .then(
        [log, job, observer](const actors::submit_reply& reply) {
          log->job_id = reply.job_id;
          if (!reply.accepted) {
            log->refused = true;
            log->refusal = reply.reason;
            return;
          }
          job->emplace(reply.job_id, observer);
        },
        [log](const caf::error& err) {
          log->refused = true;
          log->refusal = "the scheduler did not answer the submission: " + to_string(err);
        });
  };
  const auto now = [self] { return self->clock().now().time_since_epoch().count(); };
  return {
    [=](const actors::join_reply& reply) {
      trace->add(trace_line{{"t", now()}, {"joined", reply.accepted}, {"id", reply.node_id}}
                   .dump());
      if (++log->joins == nodes)
        submit();
    },
    [=](const actors::job_progress& p) {
      if (*job)
        (*job)->on(p);
    },
    // A restarted scheduler: attach to the job again, as `strom submit` does.
    [=](actors::attach_atom, const caf::actor& restarted) {
      self->request(restarted, answer, actors::attach_atom_v, log->job_id)
        .then([](const actors::submit_reply&) {},
              [=](const caf::error& err) {
                trace->add(
                  trace_line{{"t", now()}, {"attach_failed", to_string(err)}}.dump());
              });
    },
    [=](const actors::job_epoch& e) {
      log->epochs_done = e.summary.epoch;
      log->epochs.emplace_back(self->clock().now(), e.summary);
      if (*job)
        (*job)->on(e);
      trace->add(trace_line{{"t", now()},
                            {"epoch", e.summary.epoch},
                            {"train_loss", e.summary.train_loss},
                            {"test_accuracy", e.summary.test_accuracy}}
                   .dump());
    },
    [=](const actors::job_finished& done) {
      log->finished = done;
      trace->add(trace_line{{"t", now()},
                            {"finished", done.succeeded},
                            {"failure", done.failure},
                            {"train_samples", done.report.train_samples},
                            {"test_accuracy", done.report.test_accuracy},
                            {"duplicate_updates_applied", done.report.duplicate_updates_applied}}
                   .dump());
    },
  };
}

} // namespace strom::runtime::sim
