#pragma once
// An actor system on CAF's deterministic test_coordinator (virtual time, messages run only
// when a test says so) with strom's message types, plus a blocking actor the test talks
// through. Blocking receives must only look at mailboxes after `sched.run()`.

#include <chrono>
#include <cstddef>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"

namespace strom::testing {

struct deterministic_system {
  static caf::actor_system_config& configured(caf::actor_system_config& cfg) {
    actors::register_message_types(cfg);
    cfg.set("scheduler.policy", caf::atom("testing"));
    return cfg;
  }
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  caf::scheduler::test_coordinator& sched =
    dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  caf::scoped_actor self{sys};

  /// The blocking actor as a handle other actors can be given.
  caf::actor me() { return caf::actor_cast<caf::actor>(self); }

  /// Messages of types Ts... (e.g. an atom and a struct) waiting in the blocking actor's
  /// mailbox, taken out.
  template <class... Ts>
  std::size_t take_all() {
    std::size_t count = 0;
    bool more = true;
    while (more)
      self->receive([&](const Ts&...) { ++count; },
                    caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return count;
  }
};

} // namespace strom::testing
