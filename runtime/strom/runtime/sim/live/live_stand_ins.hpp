#pragma once
// What stands around the product's actors in a live run, as the real programs do around them:
// the node daemon (`strom node`: a new agent after the scheduler's restart) and the client
// (`strom submit`: submits once the nodes joined, follows the job, attaches again to a
// restarted scheduler).

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/job/progress.hpp"
#include "strom/actors/timing.hpp"
#include "strom/runtime/node/node_startup.hpp"
#include "strom/runtime/sim/sim_trace.hpp"
#include "strom/runtime/job/training_progress.hpp"

namespace strom::runtime::sim {

/// The scheduler as nodes and the client reach it: null while it is down.
using scheduler_slot = std::shared_ptr<caf::actor>;

/// What `strom node` does around its agent (runtime/node/node_daemon.cpp): when the agent ends
/// because it lost the scheduler, it tries again, paced as the daemon is (reconnect_pause.hpp),
/// until a scheduler is there, and a new agent joins it under the node's name.
struct node_daemon_state {
  caf::timespan pause{};
  caf::actor_clock::time_point lost_at{};  ///< when its agent lost the scheduler
};

/// What a node daemon restarts its agent with.
struct daemon_setup {
  caf::actor* agent;  ///< the node's agent, replaced by each new one
  scheduler_slot scheduler;
  node_identity identity;
  caf::actor observer;
  actors::timing timeouts;
};

/// The daemon of one node: watches `*setup.agent` and replaces it when it lost the scheduler,
/// once the scheduler is back; like `strom node`, it gives up after the reconnect timeout.
caf::behavior node_daemon(caf::stateful_actor<node_daemon_state>* self, daemon_setup setup);

/// What the run's client (on the scheduler's machine) heard.
struct client_log {
  bool refused = false;
  std::string refusal;
  std::optional<actors::job_finished> finished;
  std::uint32_t epochs_done = 0;
  std::size_t joins = 0;  ///< join replies so far
  std::uint64_t job_id = 0;
  std::vector<std::pair<caf::actor_clock::time_point, actors::epoch_summary>> epochs;
};

/// The client: submits `submission` to `scheduler` once `nodes` join replies came, then
/// records the job's epochs and end in `log` and `trace` and passes its progress to
/// `observer` (may be null); (attach_atom, scheduler) attaches it to a restarted scheduler.
caf::behavior live_client(caf::event_based_actor* self, caf::actor scheduler,
                          actors::job_submission submission, std::size_t nodes,
                          client_log* log, sim_trace* trace, training_observer* observer,
                          caf::timespan answer);

} // namespace strom::runtime::sim
