#pragma once
// Whether something accepts TCP connections at an address: how a Slurm task that runs only a
// node knows that the scheduler (started by task 0, maybe a little later) is up, and after its
// node ended, whether the scheduler is gone (the job's end) or still there.

#include "strom/runtime/transport/endpoint.hpp"

namespace strom::runtime::launch {

/// True when a TCP connection to `where` opens (it is closed at once).
bool accepts_connections(const endpoint& where);

} // namespace strom::runtime::launch
