#include "strom/actors/errors.hpp"

#include <caf/message.hpp>

namespace strom::actors {

std::string to_string(strom_error code) {
  switch (code) {
    case strom_error::node_lost: return "node_lost";
    case strom_error::node_dropped: return "node_dropped";
    case strom_error::job_cancelled: return "job_cancelled";
    case strom_error::bad_job: return "bad_job";
    case strom_error::join_refused: return "join_refused";
    case strom_error::timeout: return "timeout";
    case strom_error::scheduler_lost: return "scheduler_lost";
    case strom_error::node_failed: return "node_failed";
    case strom_error::node_busy: return "node_busy";
    case strom_error::snapshot_failed: return "snapshot_failed";
    case strom_error::state_failed: return "state_failed";
    case strom_error::peer_lost: return "peer_lost";
    case strom_error::not_permitted: return "not_permitted";
    case strom_error::scheduler_stopped: return "scheduler_stopped";
  }
  return "strom_error " + std::to_string(static_cast<unsigned>(code));
}

caf::error make_error(strom_error code) {
  return caf::error{static_cast<std::uint8_t>(code), strom_error_category};
}

caf::error make_error(strom_error code, std::string message) {
  return caf::error{static_cast<std::uint8_t>(code), strom_error_category,
                    caf::make_message(std::move(message))};
}

std::optional<strom_error> strom_code_of(const caf::error& err) {
  if (!err || err.category() != strom_error_category)
    return std::nullopt;
  return static_cast<strom_error>(err.code());
}

void register_error_category(caf::actor_system_config& cfg) {
  cfg.add_error_category(strom_error_category,
                         [](std::uint8_t code, caf::atom_value, const caf::message& context) {
                           if (context.match_elements<std::string>())
                             return context.get_as<std::string>(0);
                           return to_string(static_cast<strom_error>(code));
                         });
}

} // namespace strom::actors
