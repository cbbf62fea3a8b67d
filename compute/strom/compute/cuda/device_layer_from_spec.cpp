// make_device_layer (device_layer.hpp): each kind of device_layer_spec to its device version.

#include "strom/compute/cuda/device_layer.hpp"
#include "strom/compute/cuda/layers/activation.hpp"
#include "strom/compute/cuda/layers/batch_normalization.hpp"
#include "strom/compute/cuda/layers/convolution.hpp"
#include "strom/compute/cuda/layers/dense.hpp"
#include "strom/compute/cuda/layers/dropout.hpp"
#include "strom/compute/cuda/layers/pooling.hpp"

namespace strom::compute::cuda {

std::unique_ptr<device_layer> make_device_layer(const device_layer_spec& s) {
  using kind = device_layer_spec::kind;
  switch (s.what) {
    case kind::dense: return make_device_dense(s.input.size(), s.units);
    case kind::activation: return make_device_activation(s.input.size(), s.function, s.alpha);
    case kind::convolution:
      return make_device_convolution({s.input, s.units, s.kernel, s.stride, s.padding});
    case kind::pooling:
      return make_device_pooling({s.input, s.max, s.kernel, s.stride, s.padding});
    case kind::batch_normalization:
      return make_device_batch_normalization(s.input, s.momentum, s.epsilon);
    case kind::dropout: return make_device_dropout(s.input.size(), s.rate, s.seed);
  }
  throw std::invalid_argument("make_device_layer: an unknown layer kind");
}

} // namespace strom::compute::cuda
