#include "strom/runtime/system_config.hpp"

#include <chrono>

#include <caf/io/middleman.hpp>

#include "strom/actors/messages.hpp"

namespace strom::runtime {

namespace {

/// CAF's own connection heartbeat: lets the middleman notice a peer whose connection went
/// silent even when no actor talks to it. Well above the time to send the largest frame.
constexpr auto connection_heartbeat = std::chrono::seconds(1);
constexpr auto connection_timeout = std::chrono::seconds(30);

void load_network(caf::actor_system_config& config) {
  config.load<caf::io::middleman>();
  config.set("middleman.heartbeat-interval", caf::timespan{connection_heartbeat});
  config.set("middleman.connection-timeout", caf::timespan{connection_timeout});
}

} // namespace

void configure_for_strom(caf::actor_system_config& config) {
  actors::register_message_types(config);
  load_network(config);
}

system_config::system_config(bool networked, std::size_t threads) {
  actors::register_message_types(*this);
  if (networked)
    load_network(*this);
  // Trainers run detached; the scheduler threads only carry the relays and agents.
  // Sleeping threads on one shared queue (the sharing policy) leave the cores to the
  // trainers: CAF's default, a work-stealing thread per core, polled ~6000 times a second
  // each on a 2-core machine with 2 trainers and took ~8% of the samples (perf).
  set("scheduler.policy", caf::atom("sharing"));
  set("scheduler.max-threads", threads);
}

} // namespace strom::runtime
