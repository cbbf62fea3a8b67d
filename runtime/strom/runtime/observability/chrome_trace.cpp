#include "strom/runtime/observability/chrome_trace.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "strom/runtime/atomic_file.hpp"

namespace strom::runtime {

namespace {

/// Microseconds, the trace format's unit, from nanoseconds.
double micros(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

/// A track name as a JSON string; names are strom's own ("worker 3", "relay").
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text)
    if (c == '"' || c == '\\')
      out.append({'\\', c});
    else if (static_cast<unsigned char>(c) >= 0x20)
      out += c;
  return out + '"';
}

/// The event's args: for whom a wait waited, whose frame was applied, a relay's counts.
std::string args_of(const actors::timeline_event& event) {
  switch (event.kind) {
    case actors::timeline_kind::wait:
      return fmt::format(R"({{"waiting_for_node":{}}})", event.detail);
    case actors::timeline_kind::apply:
      return fmt::format(R"({{"origin_node":{}}})", event.detail);
    case actors::timeline_kind::relay_traffic:
      return fmt::format(R"({{"bytes_received":{},"frames_forwarded":{}}})", event.detail,
                         event.detail2);
    default:
      return "{}";
  }
}

void append_track(std::string& out, bool& first, const actors::timeline_track& track) {
  auto events = track.events();
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  const auto separator = [&] {
    if (!first)
      out += ",\n";
    first = false;
  };
  separator();
  out += fmt::format(R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":{}}}}})",
                     track.node(), track.lane(), quoted(track.name()));
  for (const auto& event : events) {
    separator();
    if (event.kind == actors::timeline_kind::relay_traffic)
      out += fmt::format(R"({{"name":"{}","ph":"C","pid":{},"tid":{},"ts":{:.3f},"args":{}}})",
                         actors::name_of(event.kind), track.node(), track.lane(),
                         micros(event.start_ns), args_of(event));
    else
      out += fmt::format(
        R"({{"name":"{}","cat":"strom","ph":"X","pid":{},"tid":{},"ts":{:.3f},)"
        R"("dur":{:.3f},"args":{}}})",
        actors::name_of(event.kind), track.node(), track.lane(), micros(event.start_ns),
        micros(event.end_ns - event.start_ns), args_of(event));
  }
}

} // namespace

std::string to_chrome_trace(const actors::timeline_tracks& recorded) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  const auto tracks = recorded.tracks();
  std::set<std::uint64_t> nodes;
  std::size_t dropped = 0;
  for (const auto& track : tracks) {
    if (nodes.insert(track->node()).second) {
      if (!first)
        out += ",\n";
      first = false;
      out += fmt::format(
        R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"node {}"}}}})",
        track->node(), track->node());
    }
    append_track(out, first, *track);
    dropped += track->dropped();
  }
  out += fmt::format("\n],\"otherData\":{{\"events_dropped\":{}}}}}\n", dropped);
  return out;
}

result<void> write_chrome_trace(const std::string& path, const actors::timeline_tracks& recorded) {
  const auto text = to_chrome_trace(recorded);
  return write_file_atomically(
    path, std::as_bytes(std::span<const char>{text.data(), text.size()}), "timeline");
}

} // namespace strom::runtime
