#include "strom/runtime/observability/chrome_trace.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "strom/runtime/job/atomic_file.hpp"

namespace strom::runtime {

namespace {

// Ordered: each event's keys in the order of the trace format's documentation.
using json = nlohmann::ordered_json;

/// Microseconds, the trace format's unit, from nanoseconds.
double micros(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

/// The event's args: for whom a wait waited, whose frame was applied, a relay's counts.
json args_of(const actors::timeline_event& event) {
  switch (event.kind) {
    case actors::timeline_kind::wait:
      return {{"waiting_for_node", event.detail}};
    case actors::timeline_kind::apply:
      return {{"origin_node", event.detail}};
    case actors::timeline_kind::relay_traffic:
      return {{"bytes_received", event.detail}, {"frames_forwarded", event.detail2}};
    default:
      return json::object();
  }
}

void append_track(json& events, const actors::timeline_track& track) {
  auto recorded = track.events();
  std::stable_sort(recorded.begin(), recorded.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  events.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", track.node()},
                    {"tid", track.lane()},
                    {"args", {{"name", track.name()}}}});
  for (const auto& event : recorded) {
    json out = {{"name", actors::name_of(event.kind)}};
    if (event.kind == actors::timeline_kind::relay_traffic) {
      out["ph"] = "C";  // a counter
    } else {
      out["cat"] = "strom";
      out["ph"] = "X";  // a complete event: start and duration
    }
    out["pid"] = track.node();
    out["tid"] = track.lane();
    out["ts"] = micros(event.start_ns);
    if (event.kind != actors::timeline_kind::relay_traffic)
      out["dur"] = micros(event.end_ns - event.start_ns);
    out["args"] = args_of(event);
    events.push_back(std::move(out));
  }
}

} // namespace

std::string to_chrome_trace(const actors::timeline_tracks& recorded) {
  auto events = json::array();
  std::set<std::uint64_t> nodes;
  std::size_t dropped = 0;
  for (const auto& track : recorded.tracks()) {
    if (nodes.insert(track->node()).second)
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", track->node()},
                        {"args", {{"name", "node " + std::to_string(track->node())}}}});
    append_track(events, *track);
    dropped += track->dropped();
  }
  const json trace = {{"displayTimeUnit", "ms"},
                      {"traceEvents", std::move(events)},
                      {"otherData", {{"events_dropped", dropped}}}};
  return trace.dump() + '\n';
}

result<void> write_chrome_trace(const std::string& path, const actors::timeline_tracks& recorded) {
  const auto text = to_chrome_trace(recorded);
  return write_file_atomically(
    path, std::as_bytes(std::span<const char>{text.data(), text.size()}), "timeline");
}

} // namespace strom::runtime
