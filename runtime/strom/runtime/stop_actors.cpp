#include "strom/runtime/stop_actors.hpp"

#include <caf/all.hpp>

namespace strom::runtime {

std::uint32_t stop_actors(caf::actor_system& system, const std::vector<caf::actor>& actors,
                          std::chrono::seconds wait) {
  caf::scoped_actor self{system};
  std::uint32_t running = 0;
  for (const auto& member : actors) {
    if (!member)
      continue;
    self->monitor(member);
    self->send_exit(member, caf::exit_reason::user_shutdown);
    ++running;
  }
  std::uint32_t quit = 0;
  bool late = false;
  self->receive_while([&] { return !late && quit < running; })(
    [&](const caf::down_msg&) { ++quit; },
    caf::after(wait) >> [&] { late = true; });
  return running - quit;
}

} // namespace strom::runtime
