#include "strom/runtime/sim/live/live_stand_ins.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "strom/actors/errors.hpp"

namespace strom::runtime::sim {

namespace {

/// One line of the run's trace (ordered as written).
using trace_line = nlohmann::ordered_json;

} // namespace

caf::behavior node_daemon(caf::stateful_actor<node_daemon_state>* self, daemon_setup setup) {
  constexpr auto first_pause = std::chrono::milliseconds(100);
  constexpr auto max_pause = std::chrono::milliseconds(2000);
  self->monitor(*setup.agent);
  self->set_down_handler([self, setup, first_pause](const caf::down_msg& down) {
    if (down.source != setup.agent->address()
        || actors::strom_code_of(down.reason) != actors::strom_error::scheduler_lost)
      return;
    self->state.pause = first_pause;
    self->delayed_send(self, self->state.pause, caf::tick_atom_v);
  });
  return {
    [self, setup, max_pause](caf::tick_atom) {
      if (!*setup.scheduler) {
        self->state.pause = std::min<caf::timespan>(self->state.pause * 2, max_pause);
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
  // Submits once the cluster's first nodes all joined, as `strom train --nodes` does.
  auto submit = [=] {
    self->request(scheduler, answer, actors::submit_atom_v, submission)
      .then(
        [log](const actors::submit_reply& reply) {
          log->job_id = reply.job_id;
          if (!reply.accepted) {
            log->refused = true;
            log->refusal = reply.reason;
          }
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
      if (observer)
        observer->on_step(p.progress);
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
      if (observer)
        observer->on_epoch(e.summary);
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
