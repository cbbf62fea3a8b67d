#include "strom/actors/sharing/tensor_sharing.hpp"

namespace strom::actors {

double density(const tensor_sharing& x) noexcept {
  const double steps = static_cast<double>(x.encodes) * static_cast<double>(x.elements);
  return steps > 0.0 ? static_cast<double>(x.values_sent) / steps : 0.0;
}

double clipped_fraction(const tensor_sharing& x) noexcept {
  const double mass = x.sent_mass + x.clipped_mass;
  return mass > 0.0 ? x.clipped_mass / mass : 0.0;
}

double lag_steps(const std::vector<tensor_sharing>& tensors) noexcept {
  double residual = 0.0;
  double per_step = 0.0;
  for (const auto& x : tensors) {
    if (x.encodes == 0 || x.residual_mass <= 0.0)
      continue;
    residual += x.residual_mass;
    per_step += x.sent_mass / static_cast<double>(x.encodes);
  }
  return per_step > 0.0 ? residual / per_step : 0.0;
}

void describe_tensors(std::span<const compute::block_figures> figures,
                      std::span<const compute::model_tensor> tensors,
                      std::vector<tensor_sharing>& out) {
  out.resize(figures.size());
  std::size_t next = 0;  // both lists are in buffer order
  for (std::size_t k = 0; k < figures.size(); ++k) {
    const auto& f = figures[k];
    auto& x = out[k];
    while (next < tensors.size() && tensors[next].block.offset < f.offset)
      ++next;
    const bool named = next < tensors.size() && tensors[next].block.offset == f.offset
                       && tensors[next].block.count == f.count;
    x.layer = named ? static_cast<std::int32_t>(tensors[next].layer) : -1;
    x.tensor = named ? (tensors[next].weights ? "weights" : "biases") : "all";
    x.elements = f.count;
    x.encoding = static_cast<std::uint8_t>(f.last_encoding);
    x.threshold = f.threshold;
    x.scale = f.scale;
    x.encodes = f.encodes;
    x.values_sent = f.values_sent;
    x.sent_mass = f.sent_mass;
    x.clipped_mass = f.clipped_mass;
    x.residual_mass = f.residual_mass;
    x.encoders = 1;
  }
}

namespace {

/// The mean of `a` over `a_count` encoders and `b` over `b_count`.
float weighted_mean(float a, std::uint32_t a_count, float b, std::uint32_t b_count) {
  return (a * static_cast<float>(a_count) + b * static_cast<float>(b_count)) /
         static_cast<float>(a_count + b_count);
}

} // namespace

void add_tensors(std::vector<tensor_sharing>& into, const std::vector<tensor_sharing>& from) {
  if (into.empty()) {
    into = from;
    return;
  }
  if (into.size() != from.size())
    return;
  for (std::size_t k = 0; k < into.size(); ++k) {
    auto& x = into[k];
    const auto& y = from[k];
    if (x.encoders + y.encoders > 0) {
      x.threshold = weighted_mean(x.threshold, x.encoders, y.threshold, y.encoders);
      x.scale = weighted_mean(x.scale, x.encoders, y.scale, y.encoders);
    }
    x.encoders += y.encoders;
    x.encoding = y.encoding;
    x.encodes += y.encodes;
    x.values_sent += y.values_sent;
    x.sent_mass += y.sent_mass;
    x.clipped_mass += y.clipped_mass;
    x.residual_mass += y.residual_mass;
  }
}

} // namespace strom::actors
