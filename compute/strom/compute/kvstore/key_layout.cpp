#include "strom/compute/kvstore/key_layout.hpp"


namespace strom::compute {

std::vector<parameter_key> parameter_keys(const model& net) {
  std::vector<parameter_key> keys;
  const auto add = [&keys](std::size_t offset, std::size_t count) {
    if (count > 0)
      keys.push_back({static_cast<std::uint32_t>(keys.size()), offset, count});
  };
  const auto layers = net.layers();
  const auto slices = net.slices();
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& slice = slices[l];
    auto weights = layers[l]->regularized_range();
    if (weights.end > slice.parameter_count || weights.begin > weights.end)
      weights = {};  // a layer without a sound weight range is one key
    const auto base = slice.parameter_offset;
    add(base, weights.begin);
    add(base + weights.begin, weights.end - weights.begin);
    add(base + weights.end, slice.parameter_count - weights.end);
  }
  return keys;
}

std::uint32_t server_of(std::uint32_t key, std::uint32_t servers) noexcept {
  // splitmix64's finaliser: keys 0, 1, 2, ... spread over the servers like random ones.
  std::uint64_t z = key + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return servers == 0 ? 0 : static_cast<std::uint32_t>(z % servers);
}

result<std::vector<key_range>> place_keys(const std::vector<parameter_key>& keys,
                                          std::uint32_t servers, std::size_t big_array_bound) {
  if (servers == 0)
    return error{"kvstore: a job in kvstore mode needs at least one server, got 0"};
  if (big_array_bound == 0)
    return error{"kvstore: bigArrayBound must be at least 1, got 0"};
  std::vector<key_range> ranges;
  for (const auto& k : keys) {
    if (k.count < big_array_bound || servers == 1) {
      ranges.push_back({k.key, 0, server_of(k.key, servers), k.offset, k.count});
      continue;
    }
    // Even pieces; the first count % servers pieces take one element more.
    const std::size_t piece = k.count / servers;
    const std::size_t extra = k.count % servers;
    std::size_t offset = k.offset;
    for (std::uint32_t s = 0; s < servers; ++s) {
      const std::size_t count = piece + (s < extra ? 1 : 0);
      if (count > 0)
        ranges.push_back({k.key, s, s, offset, count});
      offset += count;
    }
  }
  return ranges;
}

} // namespace strom::compute
