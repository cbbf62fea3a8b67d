#include "scheduler_link.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "strom/runtime/node/node_daemon.hpp"
#include "strom/runtime/stop_signals.hpp"
#include "options/tls_flags.hpp"

namespace strom::cli {

namespace {

/// Bounds of --connect-timeout: below 100 ms a loaded scheduler could not answer even on
/// loopback; an hour is longer than anyone waits for a handshake.
constexpr auto min_connect_timeout = std::chrono::milliseconds(100);
constexpr auto max_connect_timeout = std::chrono::hours(1);

/// Bounds of --reconnect-timeout: a restarted scheduler needs a second or more to listen
/// again; beyond a day a client would wait for a scheduler nobody restarts.
constexpr auto min_reconnect_timeout = std::chrono::milliseconds(100);
constexpr auto max_reconnect_timeout = std::chrono::hours(24);

/// How long submit and attach try a scheduler that refuses their first connection: a restart
/// listens again within a few seconds, and a mistyped address should not keep anyone waiting.
constexpr auto restart_wait = std::chrono::milliseconds(5000);

/// How a client connects: within `args`' --connect-timeout, giving up on a stop signal.
result<runtime::connect_options> connect_options_of(const arguments& args) {
  auto timeout = connect_timeout_of(args);
  if (!timeout)
    return timeout.err();
  auto tls = tls_of(args);
  if (!tls)
    return tls.err();
  runtime::connect_options connecting;
  connecting.timeout = *timeout;
  connecting.limits.tls.context = *tls;
  connecting.interrupted = [] { return runtime::stop_requested(); };
  return connecting;
}

/// `link` holds `connection` from now on (a former one closes); returns its scheduler.
caf::actor hold(scheduler_link& link, runtime::guarded_connection connection) {
  link.connection = std::move(connection);
  link.scheduler = link.connection.remote;
  return link.scheduler;
}

} // namespace

option_spec connect_timeout_option() {
  return {"connect-timeout", "DURATION",
          "give up when the scheduler has not answered the connection and handshake in time "
          "(default 10s; a bare number is milliseconds)"};
}

result<std::chrono::milliseconds> connect_timeout_of(const arguments& args) {
  auto timeout = args.get_duration(connect_timeout_option().name, min_connect_timeout,
                                   max_connect_timeout, std::chrono::milliseconds(1));
  if (!timeout)
    return timeout.err();
  return timeout.value().value_or(runtime::default_connect_timeout);
}

option_spec reconnect_timeout_option() {
  return {"reconnect-timeout", "DURATION",
          "when the scheduler is lost (it restarts), try to reach it again this long and follow "
          "on (default 60s); one not listening yet is tried for 5 s at most"};
}

/// `args`' --reconnect-timeout, or its default.
result<std::chrono::milliseconds> reconnect_limit_of(const arguments& args) {
  auto reconnect = args.get_duration(reconnect_timeout_option().name, min_reconnect_timeout,
                                     max_reconnect_timeout);
  if (!reconnect)
    return reconnect.err();
  if (reconnect.value())
    return std::chrono::duration_cast<std::chrono::milliseconds>(*reconnect.value());
  return std::chrono::duration_cast<std::chrono::milliseconds>(
    actors::timing{}.reconnect_timeout);
}

result<runtime::scheduler_reconnector> reconnector_for(const arguments& args, scheduler_link& link,
                                                       const runtime::endpoint& to) {
  auto connecting = connect_options_of(args);
  if (!connecting)
    return connecting.err();
  auto reconnect = reconnect_limit_of(args);
  if (!reconnect)
    return reconnect.err();
  const caf::timespan limit = *reconnect;
  return runtime::scheduler_reconnector{
    [&link, to, connecting = *connecting, limit]() -> result<caf::actor> {
      auto connection = runtime::reconnect_to_scheduler(link.system, to, connecting, limit);
      if (!connection)
        return connection.err();
      return hold(link, std::move(*connection));
    }};
}

std::unique_ptr<scheduler_link> connect_scheduler(const arguments& args,
                                                  const runtime::endpoint& to,
                                                  const char* command, const std::string& context,
                                                  bool waits_for_restart) {
  const auto fail = [&](const std::string& why) {
    if (context.empty())
      fmt::print(stderr, "{}: {}\n", command, why);
    else
      fmt::print(stderr, "{}: {}: {}\n", command, context, why);
    return nullptr;
  };
  auto connecting = connect_options_of(args);
  if (!connecting)
    return fail(connecting.err().message);
  if (waits_for_restart) {
    auto limit = reconnect_limit_of(args);
    if (!limit)
      return fail(limit.err().message);
    connecting->wait_while_refused = std::min(*limit, restart_wait);
  }
  auto link = std::make_unique<scheduler_link>();
  auto connection = runtime::connect_to_scheduler(link->system, to, *connecting);
  if (!connection)
    return fail(connection.err().message);
  hold(*link, std::move(*connection));
  return link;
}

} // namespace strom::cli
