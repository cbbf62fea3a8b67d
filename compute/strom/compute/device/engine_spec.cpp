#include "strom/compute/device/engine_spec.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include <fmt/format.h>

#include "strom/compute/layers/batch_normalization.hpp"
#include "strom/compute/layers/convolution.hpp"
#include "strom/compute/layers/dense.hpp"
#include "strom/compute/layers/dropout.hpp"
#include "strom/compute/layers/pooling.hpp"
#include "strom/compute/random.hpp"
#include "strom/compute/updaters/nesterov.hpp"
#include "strom/compute/updaters/sgd.hpp"

namespace strom::compute {

namespace {

/// The readable name of `host`'s class, for the error message.
std::string class_name(const updater& host) {
  int status = 0;
  char* readable = abi::__cxa_demangle(typeid(host).name(), nullptr, nullptr, &status);
  std::string name = status == 0 && readable != nullptr ? readable : typeid(host).name();
  std::free(readable);
  return name;
}

} // namespace

device_layer_spec device_layer_spec_of(const layer& host, std::uint64_t seed) {
  using kind = device_layer_spec::kind;
  device_layer_spec s;
  if (const auto* d = dynamic_cast<const dense*>(&host)) {
    s.what = kind::dense;
    s.input = {d->inputs(), 1, 1};
    s.units = d->units();
  } else if (const auto* a = dynamic_cast<const activation*>(&host)) {
    s.what = kind::activation;
    s.input = a->output_shape();
    s.function = a->function();
    s.alpha = a->alpha();
  } else if (const auto* c = dynamic_cast<const convolution*>(&host)) {
    s.what = kind::convolution;
    s.input = c->input_shape();
    s.units = c->output_shape().channels;
    s.kernel = c->sliding_window().kernel;
    s.stride = c->sliding_window().stride;
    s.padding = c->sliding_window().padding;
  } else if (const auto* p = dynamic_cast<const pooling*>(&host)) {
    s.what = kind::pooling;
    s.input = p->input_shape();
    s.max = p->reduction() == pooling_kind::max;
    s.kernel = p->sliding_window().kernel;
    s.stride = p->sliding_window().stride;
    s.padding = p->sliding_window().padding;
  } else if (const auto* bn = dynamic_cast<const batch_normalization*>(&host)) {
    s.what = kind::batch_normalization;
    s.input = bn->output_shape();
    s.momentum = bn->momentum();
    s.epsilon = bn->epsilon();
  } else if (const auto* dr = dynamic_cast<const dropout*>(&host)) {
    s.what = kind::dropout;
    s.input = dr->output_shape();
    s.rate = dr->rate();
    s.seed = seed;
  } else {
    // dense_columns splits a layer across pipeline nodes; the CUDA backend trains whole models.
    throw std::invalid_argument(fmt::format(
      "the CUDA backend has no device version of the layer kind \"{}\"", host.kind()));
  }
  return s;
}

device_updater_spec device_updater_spec_of(const updater& host) {
  using kind = device_updater_spec::kind;
  device_updater_spec s;
  if (dynamic_cast<const sgd_updater*>(&host) != nullptr) {
    s.what = kind::sgd;
  } else if (const auto* n = dynamic_cast<const nesterov_updater*>(&host)) {
    s.what = kind::nesterov;  // asked before momentum: a nesterov_updater is one
    s.momentum = n->options();
  } else if (const auto* m = dynamic_cast<const momentum_updater*>(&host)) {
    s.what = kind::momentum;
    s.momentum = m->options();
  } else if (const auto* a = dynamic_cast<const adam_updater*>(&host)) {
    s.what = kind::adam;
    s.adam = a->options();
  } else if (const auto* g = dynamic_cast<const ada_grad_updater*>(&host)) {
    s.what = kind::ada_grad;
    s.ada_grad = g->options();
  } else if (const auto* r = dynamic_cast<const rms_prop_updater*>(&host)) {
    s.what = kind::rms_prop;
    s.rms_prop = r->options();
  } else {
    throw std::invalid_argument(fmt::format(
      "the CUDA backend has no device version of the updater {}", class_name(host)));
  }
  return s;
}

engine_spec engine_spec_of(const model& net, const updater& rule, float l2, std::uint64_t seed) {
  engine_spec spec;
  const auto layers = net.layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    spec.layers.push_back(device_layer_spec_of(*layers[i], derive_seed(seed, i)));
    spec.output_sizes.push_back(layers[i]->output_shape().size());
  }
  spec.slices.assign(net.slices().begin(), net.slices().end());
  spec.regularized.assign(net.regularized_ranges().begin(), net.regularized_ranges().end());
  spec.parameters = net.parameters().size();
  spec.state = net.state().size();
  spec.updater_state = rule.state_size(spec.parameters);
  spec.updater = device_updater_spec_of(rule);
  spec.l2 = l2;
  spec.inputs = net.input_shape().size();
  spec.classes = net.classes();
  spec.max_batch = net.max_batch();
  return spec;
}

} // namespace strom::compute
