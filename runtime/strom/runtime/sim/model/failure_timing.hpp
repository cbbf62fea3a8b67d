#pragma once
// When the product notices a fault, as pure functions of its timing (actors/timing.hpp,
// actors/cluster/heartbeat_monitor.cpp, runtime/node/reconnect_pause.hpp), so the model and
// its tests agree with the actors on every figure.

#include <cstdint>

namespace strom::runtime::sim {

/// When a node that stops answering at `fault_seconds` is found lost: the heartbeat monitor
/// pings every `interval` from time 0 and reports the first ping without an answer
/// `timeout` after sending it; a ping is answered only if it reaches the node (one
/// `latency` later) before the fault.
double heartbeat_detection_time(double fault_seconds, double interval, double timeout,
                                double latency);

/// When a node that lost its scheduler at `lost_seconds` first reaches it again after it came
/// back at `back_seconds`: nodes connect again with back-off (reconnect_pause.hpp), each
/// attempt taking one `latency`.
double reconnect_time(double lost_seconds, double back_seconds, double latency);

} // namespace strom::runtime::sim
