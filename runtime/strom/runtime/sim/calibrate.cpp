#include "strom/runtime/sim/calibrate.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/encoders/threshold_encoder_from_spec.hpp"
#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/data/dataset_from_spec.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/sim/calibrate_tls.hpp"

namespace strom::runtime::sim {

namespace {

using clock_type = std::chrono::steady_clock;

/// Densities the frame costs are measured at: Deeplearning4j's sparsity band (1e-4 to 1e-2),
/// and one past 1/16, where the encoder switches to the bitmap (2 bits an element).
constexpr std::array<double, 4> measured_densities{1e-4, 1e-3, 1e-2, 1e-1};

/// Steps or repetitions measured at least, whatever the budget: a median needs a few.
constexpr int min_repetitions = 5;
/// Steps before timing starts: the first steps fault in buffers and warm caches.
constexpr int warmup_steps = 3;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

/// Batches of the training set, round and round.
class batch_source {
public:
  explicit batch_source(const compute::dataset& data, std::size_t batch_size)
    : order_(data.size()), loader_(data, identity(data.size()), batch_size, true) {}

  const compute::batch& next() {
    const auto* b = loader_.next();
    if (b == nullptr) {
      loader_.reset(order_);
      b = loader_.next();
    }
    return *b;
  }

private:
  static std::vector<std::uint32_t> identity(std::size_t n) {
    std::vector<std::uint32_t> order(n);
    for (std::size_t i = 0; i < n; ++i)
      order[i] = static_cast<std::uint32_t>(i);
    return order;
  }
  std::vector<std::uint32_t> order_;
  compute::batch_loader loader_;
};

/// The magnitude above which `density` of `update`'s elements lie.
float threshold_for(std::span<const float> update, double density) {
  std::vector<float> magnitudes(update.size());
  for (std::size_t i = 0; i < update.size(); ++i)
    magnitudes[i] = std::fabs(update[i]);
  const auto rank = static_cast<std::size_t>(
    std::clamp(density * static_cast<double>(update.size()), 1.0,
               static_cast<double>(update.size() - 1)));
  std::nth_element(magnitudes.begin(), magnitudes.end() - rank, magnitudes.end());
  return std::max(*(magnitudes.end() - rank), std::numeric_limits<float>::min());
}

struct density_measurement {
  double encode_seconds = 0, decode_seconds = 0;
  std::uint64_t frame_bytes = 0;
};

result<density_measurement> measure_density(std::span<const float> update, double density,
                                            std::span<float> parameters, double budget) {
  compute::threshold_encoder_options options;
  options.policy = compute::threshold_policy{
    compute::fixed_threshold_options{threshold_for(update, density)}};
  options.clip_every = 0;
  std::vector<double> encodes, decodes;
  density_measurement out;
  compute::frame_workspace workspace;
  const auto start = clock_type::now();
  while (encodes.size() < static_cast<std::size_t>(min_repetitions)
         || seconds_since(start) < budget) {
    compute::threshold_encoder encoder{update.size(), options};  // a zero residual each time
    const auto encode_start = clock_type::now();
    auto encoded = encoder.encode(update);
    if (!encoded)
      return error{fmt::format("density {}: nothing reached the threshold", density)};
    auto built = compute::build_update_frame({1, 0, 1, 1, 0, 0}, *encoded);
    encodes.push_back(seconds_since(encode_start));
    if (!built)
      return built.err();
    out.frame_bytes = built->size();
    const auto decode_start = clock_type::now();
    if (auto applied = compute::apply_update_frame(*built, parameters, workspace); !applied)
      return applied.err();
    decodes.push_back(seconds_since(decode_start));
  }
  out.encode_seconds = median(encodes);
  out.decode_seconds = median(decodes);
  return out;
}

std::string machine_name() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0)
    host[0] = '\0';
  return fmt::format("{} ({} cores)", host.data(), std::thread::hardware_concurrency());
}

} // namespace

result<calibration_message> calibrate(const job_spec& job, const calibrate_options& options) {
  auto spec = job.reader();
  auto prefixed = [&](const error& e) {
    return error{fmt::format("{}: {}", job.source(), e.message)};
  };
  auto data = compute::load_data(spec.getData(), ".");
  if (!data)
    return prefixed(data.err());
  const std::size_t batch_size = spec.getTraining().getBatchSize();
  if (data->train.size() < batch_size)
    return error{fmt::format("{}: training.batchSize: {} is more than the {} training samples",
                             job.source(), batch_size, data->train.size())};
  auto built = compute::make_replica(spec, 0);
  if (!built)
    return prefixed(built.err());
  auto& worker = **built;
  batch_source batches{data->train, batch_size};

  // One worker's plain steps: forward, backward and the updater.
  std::vector<double> steps;
  for (int i = 0; i < warmup_steps; ++i) {
    const auto& b = batches.next();
    worker.train_step(b.features, b.labels, b.size);
  }
  const auto steps_start = clock_type::now();
  while (steps.size() < static_cast<std::size_t>(min_repetitions)
         || seconds_since(steps_start) < options.step_seconds_budget) {
    const auto& b = batches.next();
    const auto start = clock_type::now();
    worker.train_step(b.features, b.labels, b.size);
    steps.push_back(seconds_since(start));
  }

  // The density the job's own threshold settles at: sharing steps as a trainer takes them.
  auto sharing = compute::make_threshold_encoder_options(spec.getDistributed().getSharing());
  if (!sharing)
    return prefixed(sharing.err());
  const auto parameters = worker.net().parameters();
  compute::threshold_encoder encoder{parameters.size(), *sharing};
  std::vector<double> densities;
  const auto sharing_start = clock_type::now();
  while (densities.size() < static_cast<std::size_t>(min_repetitions)
         || seconds_since(sharing_start) < options.sharing_seconds_budget) {
    const auto& b = batches.next();
    worker.compute_gradients(b.features, b.labels, b.size);
    auto sent = encoder.encode_with(
      [&worker](const compute::threshold_scan_args& scan) { return worker.scan_update(scan); },
      -1.0f, parameters);
    densities.push_back(sent ? static_cast<double>(sent->values)
                                 / static_cast<double>(parameters.size())
                             : 0.0);
  }
  // The later half: the adaptive threshold has moved from its start by then.
  const std::vector<double> settled(densities.begin() + densities.size() / 2, densities.end());

  // Frames at each density, from a real update of the model.
  const auto& b = batches.next();
  worker.compute_update(b.features, b.labels, b.size);
  const std::vector<float> update(worker.update().begin(), worker.update().end());
  std::vector<float> target(parameters.begin(), parameters.end());

  auto message = std::make_unique<capnp::MallocMessageBuilder>();
  auto out = message->initRoot<schema::Calibration>();
  out.setJob(spec.getName());
  out.setMachine(machine_name());
  out.setBatchSize(static_cast<std::uint32_t>(batch_size));
  out.setParameters(parameters.size());
  out.setUpdaterStateFloats(worker.updater_state().size());
  out.setSamplesPerEpoch(data->train.size());
  out.setStepSeconds(median(steps));
  out.setMeasuredDensity(median(settled));
  auto list = out.initDensities(measured_densities.size());
  for (std::size_t i = 0; i < measured_densities.size(); ++i) {
    auto measured = measure_density(update, measured_densities[i], target,
                                    options.density_seconds_budget);
    if (!measured)
      return prefixed(measured.err());
    list[i].setDensity(measured_densities[i]);
    list[i].setEncodeSeconds(measured->encode_seconds);
    list[i].setDecodeSeconds(measured->decode_seconds);
    list[i].setFrameBytes(measured->frame_bytes);
  }
  auto tls = measure_tls_rates(options.tls_seconds_budget);
  if (!tls)
    return prefixed(tls.err());
  out.setTlsSealBytesPerSecond(tls->seal_bytes_per_second);
  out.setTlsOpenBytesPerSecond(tls->open_bytes_per_second);
  return message;
}

} // namespace strom::runtime::sim
