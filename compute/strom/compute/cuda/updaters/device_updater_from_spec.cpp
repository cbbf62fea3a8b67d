// make_device_updater (device_updater.hpp): each rule of device_updater_spec to its device
// version.

#include <stdexcept>

#include "strom/compute/cuda/device_updater.hpp"
#include "strom/compute/cuda/updaters/ada_grad.hpp"
#include "strom/compute/cuda/updaters/adam.hpp"
#include "strom/compute/cuda/updaters/momentum.hpp"
#include "strom/compute/cuda/updaters/rms_prop.hpp"
#include "strom/compute/cuda/updaters/sgd.hpp"

namespace strom::compute::cuda {

std::unique_ptr<device_updater> make_device_updater(const device_updater_spec& s) {
  using kind = device_updater_spec::kind;
  switch (s.what) {
    case kind::sgd: return std::make_unique<sgd_device_updater>();
    case kind::momentum: return std::make_unique<momentum_device_updater>(s.momentum, false);
    case kind::nesterov: return std::make_unique<momentum_device_updater>(s.momentum, true);
    case kind::adam: return std::make_unique<adam_device_updater>(s.adam);
    case kind::ada_grad: return std::make_unique<ada_grad_device_updater>(s.ada_grad);
    case kind::rms_prop: return std::make_unique<rms_prop_device_updater>(s.rms_prop);
  }
  throw std::invalid_argument("make_device_updater: an unknown updater");
}

} // namespace strom::compute::cuda
