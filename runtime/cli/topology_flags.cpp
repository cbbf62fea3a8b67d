#include "topology_flags.hpp"

#include <fmt/format.h>

namespace strom::cli {

command_spec with_topology_options(command_spec spec) {
  spec.options.push_back(
    {"topology", "KIND",
     "override distributed.topology: plain (through one hub), mesh (a tree of relays) or "
     "auto (mesh from 32 nodes)"});
  spec.options.push_back(
    {"fanout", "F", "override distributed.fanout: children a mesh node has at most (1..1024)"});
  return spec;
}

result<void> read_topology_flags(const arguments& args,
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
  return success();
}

} // namespace strom::cli
