#include "strom/actors/error_text.hpp"

#include <caf/exit_reason.hpp>
#include <caf/sec.hpp>

#include "strom/actors/errors.hpp"

namespace strom::actors {

std::string error_text(caf::actor_system& system, const caf::error& err) {
  if (!err)
    return "it stopped";
  const bool has_words = err.context().match_elements<std::string>();
  if (strom_code_of(err))
    return has_words ? err.context().get_as<std::string>(0) : to_string(*strom_code_of(err));
  // CAF turns an exception escaping a handler into runtime_error with its what().
  if (err == caf::sec::runtime_error && has_words)
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
