#pragma once
// A timeline (actors/worker/timeline.hpp) as a Chrome trace (--timeline FILE): the
// JSON object format of chrome://tracing and Perfetto, {"traceEvents": [...]}, as Horovod's
// timeline writes it. A node is a process (pid: its node id), a worker or relay a thread
// (tid: its slot, or relay_lane); spans are complete events ("ph": "X") and a relay's counts
// counter events ("ph": "C"), each thread's sorted by start time.

#include <string>

#include "strom/actors/worker/timeline.hpp"
#include "strom/compute/result.hpp"

namespace strom::runtime {

/// The trace as JSON text.
std::string to_chrome_trace(const actors::timeline_tracks& recorded);

/// Writes the trace to `path` (replacing it whole; see atomic_file.hpp).
result<void> write_chrome_trace(const std::string& path, const actors::timeline_tracks& recorded);

} // namespace strom::runtime
