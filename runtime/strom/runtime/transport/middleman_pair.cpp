#include "strom/runtime/transport/middleman_pair.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/network/multiplexer.hpp>

namespace strom::runtime {

result<middleman_pair> make_middleman_pair(caf::actor_system& system) {
  int ends[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) != 0)
    return error{std::string{"cannot create a socketpair for a peer: "} + std::strerror(errno)};
  return middleman_pair{ends[0], system.middleman().backend().new_scribe(ends[1])};
}

caf::actor basp_broker_of(caf::actor_system& system) {
  return system.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
}

} // namespace strom::runtime
