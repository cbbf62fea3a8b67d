#include "strom/actors/worker/timeline.hpp"

#include <chrono>

namespace strom::actors {

namespace {

std::int64_t nanoseconds(caf::actor_clock::time_point origin, caf::actor_clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at - origin).count();
}

} // namespace

const char* name_of(timeline_kind kind) {
  switch (kind) {
    case timeline_kind::batch: return "batch";
    case timeline_kind::forward_backward: return "forward_backward";
    case timeline_kind::encode: return "encode";
    case timeline_kind::frame: return "frame";
    case timeline_kind::wait: return "wait";
    case timeline_kind::apply: return "apply";
    case timeline_kind::snapshot: return "snapshot";
    case timeline_kind::relay_traffic: return "relay_traffic";
  }
  return "unknown";
}

timeline_track::timeline_track(time_point origin, std::uint64_t node, std::uint32_t lane,
                               std::string name)
    : origin_(origin), node_(node), lane_(lane), name_(std::move(name)) {}

void timeline_track::add(const timeline_event& event) {
  std::lock_guard lock{mutex_};
  if (events_.size() >= max_timeline_events) {
    ++dropped_;
    return;
  }
  events_.push_back(event);
}

void timeline_track::span(timeline_kind kind, time_point start, time_point end,
                          std::uint64_t detail) {
  add({kind, nanoseconds(origin_, start), nanoseconds(origin_, end), detail, 0});
}

void timeline_track::count(timeline_kind kind, time_point at, std::uint64_t value,
                           std::uint64_t value2) {
  const auto ns = nanoseconds(origin_, at);
  add({kind, ns, ns, value, value2});
}

std::vector<timeline_event> timeline_track::events() const {
  std::lock_guard lock{mutex_};
  return events_;
}

std::size_t timeline_track::dropped() const {
  std::lock_guard lock{mutex_};
  return dropped_;
}

timeline_tracks::timeline_tracks(caf::actor_clock::time_point origin) : origin_(origin) {}

std::shared_ptr<timeline_track> timeline_tracks::track(std::uint64_t node, std::uint32_t lane,
                                                std::string name) {
  auto made = std::make_shared<timeline_track>(origin_, node, lane, std::move(name));
  std::lock_guard lock{mutex_};
  tracks_.push_back(made);
  return made;
}

std::vector<std::shared_ptr<timeline_track>> timeline_tracks::tracks() const {
  std::lock_guard lock{mutex_};
  return tracks_;
}

} // namespace strom::actors
