#include "strom/actors/error_text.hpp"

#include <caf/make_message.hpp>
#include <caf/exit_reason.hpp>
#include <caf/sec.hpp>

namespace strom::actors {

caf::error make_failure(std::string message) {
  return caf::make_error(caf::sec::runtime_error, std::move(message));
}

std::string error_text(caf::actor_system& system, const caf::error& err) {
  if (!err)
    return "it stopped";
  if (err == caf::sec::runtime_error && err.context().match_elements<std::string>())
    return err.context().get_as<std::string>(0);
  if (err == caf::sec::request_timeout)
    return "no answer in time";
  if (err == caf::sec::request_receiver_down)
    return "it is gone";
  if (err == caf::exit_reason::remote_link_unreachable)
    return "its connection broke (process ended or network lost)";
  return system.render(err);
}

} // namespace strom::actors
