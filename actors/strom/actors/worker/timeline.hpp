#pragma once
// What each worker and relay did when (--timeline; Horovod's timeline): spans of a worker's
// step (batch, forward/backward, encode, frame), its waits (and for whom), the frames it
// applied and the snapshots it sent; a relay's traffic as running counts. A track per worker
// or relay keeps its events in memory (a lock no other thread takes while the run goes, so
// it costs no contention); the runtime writes them out as a Chrome trace at the end
// (runtime/observability/chrome_trace.hpp). Off, the actors hold no track and
// pay one branch per span.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor_clock.hpp>

namespace strom::actors {

/// What a span or counter records.
enum class timeline_kind : std::uint8_t {
  batch,             ///< the next batch taken from the loader
  forward_backward,  ///< the model's gradients (or a whole step of a worker alone)
  encode,            ///< the updater's step fused with the threshold scan
  frame,             ///< the update framed and handed to siblings and relay
  wait,              ///< parked by the staleness bound or an average; detail: an origin
  apply,             ///< another worker's frame applied; detail: its origin
  snapshot,          ///< a snapshot sent to a joining node
  relay_traffic,     ///< a relay's counts (counter): detail bytes received, detail2 forwarded
};

/// The name a trace shows for `kind`.
const char* name_of(timeline_kind kind);

/// One recorded event; times in nanoseconds since the timeline's start.
struct timeline_event {
  timeline_kind kind = timeline_kind::batch;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;      ///< equal to start_ns for a counter
  std::uint64_t detail = 0;
  std::uint64_t detail2 = 0;
};

/// The events of one worker or relay, in the order recorded.
class timeline_track {
public:
  using time_point = caf::actor_clock::time_point;

  timeline_track(time_point origin, std::uint64_t node, std::uint32_t lane, std::string name);

  /// Records a span from `start` to `end`.
  void span(timeline_kind kind, time_point start, time_point end, std::uint64_t detail = 0);
  /// Records counter values at `at`.
  void count(timeline_kind kind, time_point at, std::uint64_t value, std::uint64_t value2);

  /// The events so far (a copy).
  std::vector<timeline_event> events() const;
  /// Events left out once the track held max_timeline_events.
  std::size_t dropped() const;

  std::uint64_t node() const noexcept { return node_; }  ///< the trace's process
  std::uint32_t lane() const noexcept { return lane_; }  ///< the trace's thread
  const std::string& name() const noexcept { return name_; }

private:
  void add(const timeline_event& event);

  const time_point origin_;
  const std::uint64_t node_;
  const std::uint32_t lane_;
  const std::string name_;
  mutable std::mutex mutex_;
  std::vector<timeline_event> events_;
  std::size_t dropped_ = 0;
};

/// Events a track keeps at most: 2M events of 40 bytes, 80 MB a track, hours of a small
/// model's steps (about 10 events a step); later ones are counted as dropped.
inline constexpr std::size_t max_timeline_events = 2'000'000;

/// Lane of a node's relay in the trace (workers use their slot).
inline constexpr std::uint32_t relay_lane = 1'000;

/// Every track of a process.
class timeline_tracks {
public:
  explicit timeline_tracks(caf::actor_clock::time_point origin);

  /// A new track for worker or relay `lane` of node `node`.
  std::shared_ptr<timeline_track> track(std::uint64_t node, std::uint32_t lane,
                                        std::string name);
  /// The tracks made so far.
  std::vector<std::shared_ptr<timeline_track>> tracks() const;

private:
  const caf::actor_clock::time_point origin_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<timeline_track>> tracks_;
};

} // namespace strom::actors
