#pragma once
// How a guarded socket reaches CAF's middleman: a Unix socketpair per peer, one end held by
// the link_guard, the other wrapped as a CAF scribe and handed to the BASP broker, which
// then speaks its protocol over it as over any TCP connection (CAF 0.17.6's basp_broker
// accepts a scribe with `publish_atom` for the server side of a connection and with
// `connect_atom` for the client side). The middleman itself then never listens on a port.

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/io/scribe.hpp>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// The two ends of one peer's socketpair.
struct middleman_pair {
  int guard_end = -1;                  ///< the link_guard's descriptor
  caf::io::scribe_ptr middleman_end;   ///< the scribe to hand to the BASP broker
};

/// A fresh socketpair with its middleman end wrapped for `system`'s middleman.
result<middleman_pair> make_middleman_pair(caf::actor_system& system);

/// The BASP broker of `system`'s middleman.
caf::actor basp_broker_of(caf::actor_system& system);

} // namespace strom::runtime
