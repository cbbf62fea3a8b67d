#include "strom/compute/model_from_spec.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "strom/compute/layers/activation.hpp"
#include "strom/compute/layers/batch_normalization.hpp"
#include "strom/compute/layers/convolution.hpp"
#include "strom/compute/layers/dense.hpp"
#include "strom/compute/layers/dropout.hpp"
#include "strom/compute/layers/pooling.hpp"
#include "strom/compute/layers/weight_init.hpp"
#include "strom/compute/layers/window.hpp"
#include "strom/compute/saturating.hpp"

namespace strom::compute {

namespace {

/// Refuses layers whose activations would not fit memory; 2^28 floats a sample is 1 GiB.
constexpr std::size_t max_sample_floats = std::size_t{1} << 28;

/// Update frames index elements with signed 32-bit integers (schema/update.capnp,
/// threshold_encoder), so a model with more parameters could not share its updates.
constexpr std::uint64_t max_parameters = INT32_MAX;

/// Floats per sample of `s`, saturated: a shape from a job file can overflow 64 bits.
std::uint64_t sample_floats(const shape& s) {
  return saturating_mul(saturating_mul(s.channels, s.height), s.width);
}

using layer_list = std::vector<std::unique_ptr<layer>>;

struct builder {
  schema::WeightInit network_default;
  std::uint64_t dropout_seed;
  layer_list layers;
  shape current;
  std::string path;  // "network.layers[i]" of the layer being built

  error fail(std::string_view field, std::string_view problem) const {
    return error{fmt::format("{}.{}: {}", path, field, problem)};
  }

  weight_init init_of(schema::WeightInit requested) const {
    auto chosen = requested == schema::WeightInit::NETWORK_DEFAULT ? network_default : requested;
    switch (chosen) {
      case schema::WeightInit::XAVIER_UNIFORM: return weight_init::xavier_uniform;
      case schema::WeightInit::HE: return weight_init::he;
      case schema::WeightInit::HE_UNIFORM: return weight_init::he_uniform;
      default: return weight_init::xavier;
    }
  }

  void push(std::unique_ptr<layer> l) {
    current = l->output_shape();
    layers.push_back(std::move(l));
  }

  void push_activation(schema::Activation act, float alpha = 0.01f) {
    switch (act) {
      case schema::Activation::RELU: push_element_wise(activation_kind::relu, alpha); break;
      case schema::Activation::LEAKY_RELU: push_element_wise(activation_kind::leaky_relu, alpha); break;
      case schema::Activation::TANH: push_element_wise(activation_kind::tanh, alpha); break;
      case schema::Activation::SIGMOID: push_element_wise(activation_kind::sigmoid, alpha); break;
      default: break;  // identity adds no layer
    }
  }

  void push_element_wise(activation_kind kind, float alpha) {
    push(std::make_unique<activation>(current, kind, alpha));
  }

  result<void> check_units(std::string_view field, std::uint32_t units) const {
    if (units == 0)
      return fail(field, "must be at least 1");
    if (static_cast<std::size_t>(units) > max_sample_floats)
      return fail(field, fmt::format("{} is more than the {} supported", units, max_sample_floats));
    return success();
  }

  result<void> add_dense(schema::Dense::Reader d) {
    if (auto ok = check_units("dense.units", d.getUnits()); !ok)
      return ok;
    push(std::make_unique<dense>(current, d.getUnits(), init_of(d.getWeightInit())));
    push_activation(d.getActivation());
    return success();
  }

  /// Checks a window over `current` whose output has `channels` channels, before the layer
  /// exists (its constructor would compute sizes that wrap around).
  result<void> check_window(std::string_view kind, std::uint32_t kernel, std::uint32_t stride,
                            std::uint32_t padding, std::size_t channels) const {
    if (kernel == 0)
      return fail(fmt::format("{}.kernel", kind), "must be at least 1");
    if (stride == 0)
      return fail(fmt::format("{}.stride", kind), "must be at least 1");
    if (padding >= kernel)
      return fail(fmt::format("{}.padding", kind),
                  fmt::format("{} must be smaller than the kernel ({})", padding, kernel));
    const window geometry{kernel, stride, padding};
    if (!geometry.fits(current))
      return fail(fmt::format("{}.kernel", kind),
                  fmt::format("{} does not fit the input {}x{} with padding {}", kernel,
                              current.height, current.width, padding));
    const shape out{channels, geometry.output_extent(current.height),
                    geometry.output_extent(current.width)};
    if (sample_floats(out) > max_sample_floats)
      return fail(fmt::format("{}.kernel", kind),
                  fmt::format("{} with stride {} and padding {} gives {}x{}x{} outputs per "
                              "sample, more than the {} floats supported",
                              kernel, stride, padding, out.channels, out.height, out.width,
                              max_sample_floats));
    return success();
  }

  result<void> add_convolution(schema::Convolution::Reader c) {
    if (auto ok = check_units("convolution.filters", c.getFilters()); !ok)
      return ok;
    if (auto ok = check_window("convolution", c.getKernel(), c.getStride(), c.getPadding(),
                               c.getFilters());
        !ok)
      return ok;
    // One im2col column holds a kernel x kernel patch of every input channel.
    const std::uint64_t patch =
      saturating_mul(saturating_mul(current.channels, c.getKernel()), c.getKernel());
    if (patch > max_sample_floats)
      return fail("convolution.kernel",
                  fmt::format("{}: a {}x{} patch over {} channels is {} floats, more than the {} "
                              "supported",
                              c.getKernel(), c.getKernel(), c.getKernel(), current.channels, patch,
                              max_sample_floats));
    push(std::make_unique<convolution>(current, c.getFilters(), c.getKernel(), c.getStride(),
                                       c.getPadding(), init_of(c.getWeightInit())));
    push_activation(c.getActivation());
    return success();
  }

  result<void> add_pooling(schema::Pooling::Reader p, pooling_kind kind, std::string_view name) {
    const std::uint32_t stride = p.getStride() == 0 ? p.getKernel() : p.getStride();
    if (auto ok = check_window(name, p.getKernel(), stride, p.getPadding(), current.channels); !ok)
      return ok;
    push(std::make_unique<pooling>(current, kind, p.getKernel(), stride, p.getPadding()));
    return success();
  }

  result<void> add_dropout(schema::Dropout::Reader d, std::size_t index) {
    const float rate = d.getRate();
    if (!(rate >= 0.0f && rate < 1.0f))
      return fail("dropout.rate", fmt::format("{} is outside [0, 1)", rate));
    push(std::make_unique<dropout>(current, rate, derive_seed(dropout_seed, index)));
    return success();
  }

  result<void> add_batch_normalization(schema::BatchNormalization::Reader b) {
    if (!(b.getMomentum() >= 0.0f && b.getMomentum() < 1.0f))
      return fail("batchNormalization.momentum", fmt::format("{} is outside [0, 1)", b.getMomentum()));
    if (!(b.getEpsilon() > 0.0f) || !std::isfinite(b.getEpsilon()))
      return fail("batchNormalization.epsilon", fmt::format("{} must be > 0", b.getEpsilon()));
    push(std::make_unique<batch_normalization>(current, b.getMomentum(), b.getEpsilon()));
    return success();
  }

  result<void> add_leaky_relu(schema::LeakyRelu::Reader l) {
    if (!std::isfinite(l.getAlpha()) || l.getAlpha() < 0.0f)
      return fail("leakyRelu.alpha", fmt::format("{} must be finite and >= 0", l.getAlpha()));
    push_element_wise(activation_kind::leaky_relu, l.getAlpha());
    return success();
  }

  result<void> add(schema::Layer::Reader spec, std::size_t index, bool last) {
    using which = schema::Layer::Which;
    if (spec.which() == which::OUTPUT && !last)
      return fail("output", "only the last layer may be an output layer");
    if (last && spec.which() != which::OUTPUT)
      return error{fmt::format("{}: the last layer must be an `output` layer", path)};
    switch (spec.which()) {
      case which::DENSE: return add_dense(spec.getDense());
      case which::CONVOLUTION: return add_convolution(spec.getConvolution());
      case which::MAX_POOLING: return add_pooling(spec.getMaxPooling(), pooling_kind::max, "maxPooling");
      case which::AVERAGE_POOLING:
        return add_pooling(spec.getAveragePooling(), pooling_kind::average, "averagePooling");
      case which::RELU: push_element_wise(activation_kind::relu, 0.0f); return success();
      case which::LEAKY_RELU: return add_leaky_relu(spec.getLeakyRelu());
      case which::TANH: push_element_wise(activation_kind::tanh, 0.0f); return success();
      case which::SIGMOID: push_element_wise(activation_kind::sigmoid, 0.0f); return success();
      case which::DROPOUT: return add_dropout(spec.getDropout(), index);
      case which::BATCH_NORMALIZATION: return add_batch_normalization(spec.getBatchNormalization());
      case which::OUTPUT: {
        auto out = spec.getOutput();
        if (auto ok = check_units("output.units", out.getUnits()); !ok)
          return ok;
        if (out.getUnits() < 2)
          return fail("output.units", fmt::format("{} classes: a classifier needs at least 2",
                                                  out.getUnits()));
        push(std::make_unique<dense>(current, out.getUnits(), init_of(out.getWeightInit())));
        return success();
      }
    }
    return error{fmt::format("{}: unknown layer kind {} (a newer job file?)", path,
                             static_cast<int>(spec.which()))};
  }
};

} // namespace

result<network_layers> make_layers(schema::Network::Reader spec, std::uint64_t dropout_seed) {
  auto input = spec.getInput();
  shape in{input.getChannels(), input.getHeight(), input.getWidth()};
  if (in.channels == 0 || in.height == 0 || in.width == 0)
    return error{fmt::format("network.input: channels, height and width must be at least 1, got "
                             "{}x{}x{}", in.channels, in.height, in.width)};
  if (sample_floats(in) > max_sample_floats)
    return error{fmt::format("network.input: {}x{}x{} floats per sample is more than the {} "
                             "supported", in.channels, in.height, in.width, max_sample_floats)};
  auto layers = spec.getLayers();
  if (layers.size() == 0)
    return error{"network.layers: empty; a network needs at least an `output` layer"};
  builder b{spec.getWeightInit(), dropout_seed, {}, in, {}};
  if (b.network_default == schema::WeightInit::NETWORK_DEFAULT)
    b.network_default = schema::WeightInit::XAVIER;
  std::uint64_t parameters = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    b.path = fmt::format("network.layers[{}]", i);
    const std::size_t built_before = b.layers.size();  // a spec's activation adds a layer
    if (auto ok = b.add(layers[i], i, i + 1 == layers.size()); !ok)
      return ok.err();
    if (sample_floats(b.current) > max_sample_floats)
      return error{fmt::format("{}: output of {} floats per sample is more than the {} supported",
                               b.path, sample_floats(b.current), max_sample_floats)};
    for (std::size_t added = built_before; added < b.layers.size(); ++added)
      parameters = saturating_add(parameters, b.layers[added]->parameter_count());
    if (parameters > max_parameters)
      return error{fmt::format("{}: the network has {} parameters up to here, more than the {} "
                               "that update frames can index",
                               b.path, parameters, max_parameters)};
  }
  const std::size_t classes = layers[layers.size() - 1].getOutput().getUnits();
  return network_layers{in, std::move(b.layers), classes};
}

result<std::unique_ptr<model>> make_model(schema::Network::Reader spec, std::uint64_t dropout_seed) {
  auto built = make_layers(spec, dropout_seed);
  if (!built)
    return built.err();
  return std::make_unique<model>(built->input, std::move(built->layers), built->classes);
}

} // namespace strom::compute
