#pragma once
// What watches a process's actors, as --metrics-listen and --timeline ask for it: a
// Prometheus registry served on a port, a timeline written as a Chrome trace at the end. One
// per process (scheduler, node, or `strom train` with its in-process cluster); its hooks go to
// the scheduler, the job masters, the node agents and through them to trainers and relays.

#include <memory>
#include <optional>
#include <string>

#include "strom/actors/job/metrics_sink.hpp"
#include "strom/actors/worker/timeline.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/transport/endpoint.hpp"

namespace strom::runtime {

class live_cluster;
class metrics_endpoint;
class prometheus_metrics;

/// The hooks handed to actors; each null when not asked for.
struct observers {
  std::shared_ptr<actors::metrics_sink> metrics;
  std::shared_ptr<actors::timeline_tracks> timeline;
};

/// What the command line asked to watch.
struct observation_options {
  std::optional<endpoint> metrics_listen;  ///< --metrics-listen HOST:PORT
  std::string timeline_path;               ///< --timeline FILE; empty: none
  /// Also receives the actors' figures (a run's history for --html-out); may be null.
  std::shared_ptr<actors::metrics_sink> recorder;
  /// Serve the live dashboard at / beside /metrics (a scheduler; needs metrics_listen).
  bool dashboard = false;
};

/// The running observation: its port stays open while it lives.
class observation {
public:
  /// Opens what `options` ask for; the error names the address that could not be opened.
  static result<std::unique_ptr<observation>> start(const observation_options& options);

  ~observation();
  observation(const observation&) = delete;
  observation& operator=(const observation&) = delete;

  /// The hooks for the process's actors.
  const observers& hooks() const noexcept { return hooks_; }

  /// The /metrics port (0 without --metrics-listen).
  std::uint16_t metrics_port() const noexcept;

  /// What the dashboard shows; null without one. Its scheduler view is set once the
  /// scheduler runs (live_cluster::set_view).
  live_cluster* dashboard() const noexcept { return dashboard_.get(); }

  /// Writes the timeline (if one was asked for) once the actors that record it have ended;
  /// the error names the file.
  result<void> finish() const;

private:
  observation() = default;

  observers hooks_;
  std::shared_ptr<prometheus_metrics> metrics_;
  std::shared_ptr<live_cluster> dashboard_;
  std::unique_ptr<metrics_endpoint> endpoint_;
  std::string timeline_path_;
};

} // namespace strom::runtime
