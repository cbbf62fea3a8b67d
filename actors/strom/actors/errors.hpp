#pragma once
// strom's error codes, one CAF error category ("strom"), so a supervisor can branch on what
// went wrong ("a node was lost: go on without it" vs "the job is bad: fail it") instead of
// parsing words. The words users read travel as the error's context and come back through
// error_text; the category's renderer shows them too where CAF renders an error itself.

#include <cstdint>
#include <optional>
#include <string>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>

namespace strom::actors {

/// What went wrong. Values travel on the wire as one byte: only append (0 means no error).
enum class strom_error : std::uint8_t {
  node_lost = 1,    ///< a node crashed, hung or left while it ran a job
  node_dropped,     ///< the scheduler no longer counts this node as a member
  job_cancelled,    ///< a client cancelled the job
  bad_job,          ///< the job cannot run as given (its file, data or sizes)
  join_refused,     ///< the scheduler refused a node's join
  timeout,          ///< a peer did not answer in time
  scheduler_lost,   ///< a node lost its scheduler
  node_failed,      ///< an actor of a node stopped while it ran a job
  node_busy,        ///< a node asked to prepare a job while it runs or prepares another
  snapshot_failed,  ///< a trainer could not encode or chunk its snapshot
  state_failed,     ///< the scheduler could not keep its state or a checkpoint
  peer_lost,        ///< a request's target was lost before it answered (request_while_alive)
  not_permitted,    ///< a message from an actor that may not send it (a stranger to the job)
  scheduler_stopped,  ///< a node's scheduler shut down on purpose (it may be restarted)
};

/// The category every strom error carries.
inline constexpr caf::atom_value strom_error_category = caf::atom("strom");

/// The name of `code`, e.g. "node_lost".
std::string to_string(strom_error code);

/// An error with `code` and no words.
caf::error make_error(strom_error code);

/// An error with `code` whose words (`message`) the receiver gets back through error_text.
caf::error make_error(strom_error code, std::string message);

/// The strom code of `err`, or nothing when `err` is no strom error.
std::optional<strom_error> strom_code_of(const caf::error& err);

/// Registers the category's renderer on `cfg` (register_message_types calls it).
void register_error_category(caf::actor_system_config& cfg);

} // namespace strom::actors
