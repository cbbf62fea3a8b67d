#pragma once
// What watches a process's actors, as --metrics-listen asks for it: a Prometheus registry
// served on a port. One per process (scheduler, node, or `strom train` with its in-process
// cluster); its hooks go to the scheduler, the job masters and the node agents.

#include <memory>
#include <optional>

#include "strom/actors/metrics_sink.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/transport/endpoint.hpp"

namespace strom::runtime {

class metrics_endpoint;
class prometheus_metrics;

/// The hooks handed to actors; each null when not asked for.
struct observers {
  std::shared_ptr<actors::metrics_sink> metrics;
};

/// What the command line asked to watch.
struct observation_options {
  std::optional<endpoint> metrics_listen;  ///< --metrics-listen HOST:PORT
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

private:
  observation() = default;

  observers hooks_;
  std::shared_ptr<prometheus_metrics> metrics_;
  std::unique_ptr<metrics_endpoint> endpoint_;
};

} // namespace strom::runtime
