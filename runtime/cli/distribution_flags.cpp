#include "distribution_flags.hpp"

#include <fmt/format.h>

namespace strom::cli {

command_spec with_distribution_options(command_spec spec) {
  spec.options.push_back(
    {"topology", "KIND",
     "override distributed.topology: plain (through one hub), mesh (a tree of relays) or "
     "auto (mesh from 32 nodes)"});
  spec.options.push_back(
    {"fanout", "F", "override distributed.fanout: children a mesh node has at most (1..1024)"});
  spec.options.push_back(
    {"mode", "MODE",
     "override distributed.mode: shared (threshold-encoded updates every step) or averaging "
     "(parameters averaged every --averaging-frequency steps)"});
  spec.options.push_back({"averaging-frequency", "K",
                          "override distributed.averagingFrequency: steps between averages"});
  return spec;
}

result<void> read_distribution_flags(const arguments& args,
                                     runtime::local_training_options& overrides) {
  if (auto text = args.get("topology")) {
    auto kind = actors::parse_topology_kind(*text);
    if (!kind)
      return error{"--topology: " + kind.err().message};
    overrides.topology = *kind;
  }
  auto fanout = args.get_uint("fanout", 1, actors::max_fanout);
  if (!fanout)
    return fanout.err();
  if (auto f = fanout.value())
    overrides.fanout = static_cast<std::uint32_t>(*f);
  if (auto text = args.get("mode")) {
    auto mode = runtime::parse_training_mode(*text);
    if (!mode)
      return error{"--mode: " + mode.err().message};
    overrides.mode = *mode;
  }
  auto frequency = args.get_uint("averaging-frequency", 1, runtime::max_averaging_frequency);
  if (!frequency)
    return frequency.err();
  if (auto k = frequency.value())
    overrides.averaging_frequency = static_cast<std::uint32_t>(*k);
  return success();
}

} // namespace strom::cli
