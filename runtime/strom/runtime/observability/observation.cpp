#include "strom/runtime/observability/observation.hpp"

#include <caf/actor_clock.hpp>

#include "strom/log.hpp"
#include "strom/runtime/observability/chrome_trace.hpp"
#include "strom/runtime/observability/live_cluster.hpp"
#include "strom/runtime/observability/metrics_endpoint.hpp"
#include "strom/runtime/observability/metrics_tee.hpp"
#include "strom/runtime/observability/prometheus_metrics.hpp"

namespace strom::runtime {

result<std::unique_ptr<observation>> observation::start(const observation_options& options) {
  std::unique_ptr<observation> started{new observation};
  if (options.metrics_listen) {
    started->metrics_ = std::make_shared<prometheus_metrics>();
    status_source status;
    started->hooks_.metrics = started->metrics_;
    if (options.dashboard) {
      started->dashboard_ = std::make_shared<live_cluster>();
      status = [live = started->dashboard_] { return live->json(); };
      started->hooks_.metrics =
        std::make_shared<metrics_tee>(started->hooks_.metrics, started->dashboard_);
    }
    auto opened = metrics_endpoint::open(*options.metrics_listen, started->metrics_->registry(),
                                         status);
    if (!opened)
      return opened.err();
    started->endpoint_ = std::move(*opened);
    const endpoint serving{options.metrics_listen->host, started->endpoint_->port()};
    log::info("metrics: serving http://{}/metrics", to_string(serving));
    if (started->dashboard_)
      log::info("dashboard: http://{}/", to_string(serving));
  }
  if (options.recorder)
    started->hooks_.metrics =
      started->hooks_.metrics
        ? std::make_shared<metrics_tee>(started->hooks_.metrics, options.recorder)
        : options.recorder;
  if (!options.timeline_path.empty()) {
    // Actor clocks are steady_clock: every system's trainers share this origin.
    started->hooks_.timeline =
      std::make_shared<actors::timeline_tracks>(caf::actor_clock::clock_type::now());
    started->timeline_path_ = options.timeline_path;
  }
  return started;
}

result<void> observation::finish() const {
  if (!hooks_.timeline)
    return success();
  if (auto written = write_chrome_trace(timeline_path_, *hooks_.timeline); !written)
    return error{"--timeline: " + written.err().message};
  log::info("timeline: wrote {}", timeline_path_);
  return success();
}

observation::~observation() = default;

std::uint16_t observation::metrics_port() const noexcept {
  return endpoint_ ? endpoint_->port() : 0;
}

} // namespace strom::runtime
