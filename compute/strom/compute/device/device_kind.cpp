#include "strom/compute/device/device_kind.hpp"

namespace strom::compute {

std::string to_string(device_kind kind) {
  return kind == device_kind::cuda ? "cuda" : "cpu";
}

std::optional<device_kind> parse_device_kind(std::string_view name) {
  if (name == "cpu")
    return device_kind::cpu;
  if (name == "cuda")
    return device_kind::cuda;
  return std::nullopt;
}

} // namespace strom::compute
