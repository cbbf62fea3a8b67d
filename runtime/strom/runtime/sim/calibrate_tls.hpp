#pragma once
// What TLS costs this machine on a simulated link (strom sim --tls-*): frames sealed into TLS
// 1.3 records by one end of a tls_pipe and opened by the other, timed. The link's identities
// come from a throwaway CA made for the measurement (and deleted after it), so calibrating
// needs no certificates: the cipher's cost does not depend on whose they are.

#include "strom/compute/result.hpp"

namespace strom::runtime::sim {

/// Bytes a second that sealing and opening take, each on one core.
struct tls_rates {
  double seal_bytes_per_second = 0;
  double open_bytes_per_second = 0;
};

/// Measures for at least `budget_seconds`.
result<tls_rates> measure_tls_rates(double budget_seconds);

} // namespace strom::runtime::sim
