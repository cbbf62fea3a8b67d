#include "strom/runtime/embedded_runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <typeindex>

#include <caf/all.hpp>

#include "strom/actors/cluster/in_process_address.hpp"
#include "strom/actors/cluster/scheduler.hpp"
#include "strom/log.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/node/node_startup.hpp"
#include "strom/runtime/stop_actors.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/node/pipeline_setup.hpp"

namespace strom {

namespace {

/// Time for the node to hear back from the scheduler in the same system; it answers at once
/// unless the system is overloaded or misconfigured.
constexpr auto join_wait = std::chrono::seconds(10);

/// Time for the node and the scheduler to quit once told to.
constexpr auto stop_wait = std::chrono::seconds(10);

/// How the node announces itself to the runtime's scheduler.
constexpr const char* node_name = "embedded";

} // namespace

/// The actor system of a runtime that does not attach to a host's; no network layer, since
/// everything stays in this process.
struct embedded_runtime::owned_system {
  runtime::system_config config{false};
  caf::actor_system system{config};
};

embedded_runtime::embedded_runtime(embedded_runtime_options options)
  : embedded_runtime(std::make_unique<owned_system>(), nullptr, options) {
}

embedded_runtime::embedded_runtime(caf::actor_system& host, embedded_runtime_options options)
  : embedded_runtime(nullptr, &host, options) {
}

embedded_runtime::embedded_runtime(std::unique_ptr<owned_system> owned, caf::actor_system* host,
                                   embedded_runtime_options options)
  : owned_(std::move(owned)), system_(owned_ ? owned_->system : *host) {
  // Without the registration, messages that cross to another node arrive empty, and
  // configure_for_strom registers every type at once: one probe tells.
  const auto& registered = system_.config().type_names_by_rtti;
  if (registered.count(std::type_index(typeid(actors::job_submission))) == 0)
    throw std::invalid_argument(
      "strom::embedded_runtime: the host's actor system lacks strom's message types; call "
      "strom::runtime::configure_for_strom(config) before creating the actor_system");
  const std::uint32_t workers =
    options.workers > 0 ? options.workers : std::max(1u, std::thread::hardware_concurrency());
  actors::scheduler_setup scheduling;
  scheduling.place = runtime::place_job;
  scheduler_ = system_.spawn(actors::scheduler, std::move(scheduling));
  caf::scoped_actor self{system_};
  node_ = runtime::spawn_node(system_, scheduler_,
                              {node_name, actors::in_process_address, workers, {}},
                              caf::actor_cast<caf::actor>(self));
  if (auto joined = runtime::await_joins(self, 1, join_wait); !joined) {
    stop();
    throw std::runtime_error("strom::embedded_runtime: " + joined.err().message);
  }
}

embedded_runtime::~embedded_runtime() {
  stop();
}

void embedded_runtime::stop() noexcept {
  // The node first: the scheduler would fail its job when it goes, and the node would quit
  // on losing the scheduler anyway.
  if (const auto left = runtime::stop_actors(system_, {node_, scheduler_}, stop_wait); left > 0)
    log::warning("strom::embedded_runtime: {} of its actors did not quit within {} s", left,
                 stop_wait.count());
  node_ = nullptr;
  scheduler_ = nullptr;
}

result<std::uint64_t> embedded_runtime::submit(runtime::job_spec& job,
                                               const runtime::local_training_options& options) {
  auto submission = runtime::make_submission(job, options, 0);
  if (!submission)
    return submission.err();
  auto job_id = runtime::submit_job(system_, scheduler_, *submission);
  if (!job_id)
    return error{fmt::format("{}: {}", job.source(), job_id.err().message)};
  return job_id;
}

result<training_report> embedded_runtime::wait(std::uint64_t job_id,
                                               runtime::training_observer* observer) {
  return runtime::attach_job(system_, scheduler_, job_id, observer);
}

result<training_report> embedded_runtime::train(runtime::job_spec& job,
                                                const runtime::local_training_options& options) {
  // One client for submission and progress, so that no progress is missed in between.
  auto submission = runtime::make_submission(job, options, 0);
  if (!submission)
    return submission.err();
  auto report = runtime::run_job(system_, scheduler_, *submission, options.observer);
  if (!report)
    return error{fmt::format("{}: {}", job.source(), report.err().message)};
  return report;
}

} // namespace strom
