#pragma once
// What one worker's step costs on a node of speed 1, as the model uses it: from a calibration
// file that `strom sim calibrate` measured on this machine (interpolated at a density) or
// given in a scenario (Deeplearning4j's example costs, say).

#include <cstdint>
#include <vector>

namespace strom::runtime::sim {

/// The costs of one step, at one density.
struct step_costs {
  double step_seconds = 0;      ///< forward, backward and update of one batch
  double encode_seconds = 0;    ///< threshold-encoding one worker's update into a frame
  double decode_seconds = 0;    ///< reading one frame and applying it to a replica
  double overhead_seconds = 0;  ///< anything else a sharing step costs a worker
  std::uint64_t frame_bytes = 0;  ///< one worker's frame on the wire
  std::uint32_t batch_size = 0;
  std::uint64_t parameters = 0;       ///< floats in the model (snapshot sizes)
  std::uint64_t updater_floats = 0;   ///< updater state floats (snapshot sizes)
  std::uint64_t samples_per_epoch = 0;
  double density = 0;                 ///< fraction of the elements a frame carries
  /// TLS on the links (strom sim --tls-*): what sealing and opening a frame's bytes take;
  /// 0: not measured.
  double tls_seal_bytes_per_second = 0;
  double tls_open_bytes_per_second = 0;
};

/// Encode, decode and frame size measured at one density.
struct density_point {
  double density = 0;
  double encode_seconds = 0;
  double decode_seconds = 0;
  std::uint64_t frame_bytes = 0;
};

/// A calibration: the step's fixed costs and the density-dependent ones, ascending.
struct calibration_table {
  step_costs base;                      ///< density-dependent fields unset
  double measured_density = 0;          ///< where the job's threshold settled
  std::vector<density_point> points;    ///< ascending density, at least one
};

/// Steps of every worker that one epoch takes when `workers` workers split it (at least 1).
std::uint64_t steps_per_epoch(const step_costs& costs, std::uint64_t workers);

/// What one worker alone at speed 1 trains a second: its plain steps, no sharing costs (the
/// reference of a scaling efficiency).
double single_worker_samples_per_second(const step_costs& costs);

/// The costs at `density` (0: the measured density): encode, decode and frame bytes
/// interpolated linearly between the two nearest measured densities, and held at the end
/// points outside them (the scan's cost is flat in density; the rest is a header there).
step_costs costs_at(const calibration_table& table, double density);

} // namespace strom::runtime::sim
