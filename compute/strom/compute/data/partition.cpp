#include "strom/compute/data/partition.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "strom/compute/random.hpp"

namespace strom::compute {

index_range partition(std::size_t samples, std::size_t rank, std::size_t count) {
  if (rank >= count)
    throw std::invalid_argument(
      fmt::format("partition: rank {} is not below the worker count {}", rank, count));
  const std::size_t base = samples / count;
  const std::size_t extra = samples % count;
  const std::size_t begin = rank * base + std::min(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

std::vector<std::uint32_t> epoch_order(index_range range, std::uint64_t seed, std::uint32_t epoch,
                                       bool shuffle) {
  if (range.end < range.begin
      || range.end > std::size_t{std::numeric_limits<std::uint32_t>::max()} + 1)
    throw std::length_error(fmt::format("epoch_order: range [{}, {}) does not fit 32-bit indices",
                                        range.begin, range.end));
  std::vector<std::uint32_t> order(range.size());
  std::iota(order.begin(), order.end(), static_cast<std::uint32_t>(range.begin));
  if (!shuffle)
    return order;
  rng generator(derive_seed(seed, epoch));
  for (std::size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[generator.below(i)]);
  return order;
}

} // namespace strom::compute
