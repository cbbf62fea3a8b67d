#pragma once
// The client side of submit, attach and status: an actor system of its own, connected to the
// scheduler. The system must outlive every request made through it, hence one object.

#include <chrono>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "options/arguments.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/transport/endpoint.hpp"
#include "strom/runtime/transport/guarded_connect.hpp"
#include "strom/runtime/system_config.hpp"

namespace strom::cli {

/// A client actor system and the scheduler it reached.
struct scheduler_link {
  runtime::system_config config{true};
  caf::actor_system system{config};
  runtime::guarded_connection connection;
  caf::actor scheduler;
};

/// The option every client command takes: one deadline for connection and handshake (a
/// function: command tables are built during static initialisation).
option_spec connect_timeout_option();

/// --connect-timeout from `args` (default 10 s); errors name the option and value.
result<std::chrono::milliseconds> connect_timeout_of(const arguments& args);

/// The option submit and attach take: how long they try to reach a lost scheduler again.
option_spec reconnect_timeout_option();

/// What reaches the scheduler at `to` again for `link` (which then holds the new connection),
/// trying for `args`' --reconnect-timeout (default 60 s); errors name the option and value.
result<runtime::scheduler_reconnector> reconnector_for(const arguments& args, scheduler_link& link,
                                                       const runtime::endpoint& to);

/// Connects to the scheduler at `to` within `args`' --connect-timeout; `waits_for_restart`
/// (submit, attach) tries a scheduler that refuses the connection (restarting) again for 5 s
/// (less when `args`' --reconnect-timeout is shorter), as sbatch waits for its controller.
/// On failure prints
/// "COMMAND: CONTEXT: why" (without CONTEXT when it is empty) to stderr and returns null.
std::unique_ptr<scheduler_link> connect_scheduler(const arguments& args,
                                                  const runtime::endpoint& to,
                                                  const char* command, const std::string& context,
                                                  bool waits_for_restart = false);

} // namespace strom::cli
