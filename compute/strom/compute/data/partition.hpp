#pragma once
// Splitting a dataset among data-parallel workers, and the order each worker visits its
// share in an epoch.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strom::compute {

/// Sample indices [begin, end).
struct index_range {
  std::size_t begin = 0;
  std::size_t end = 0;

  /// Number of indices.
  std::size_t size() const noexcept { return end - begin; }
  friend bool operator==(const index_range&, const index_range&) = default;
};

/// Worker `rank`'s contiguous share of `samples` among `count` workers: shares are disjoint,
/// cover all samples, and differ in size by at most one (the first samples % count ranks get
/// the extra one). Throws std::invalid_argument unless rank < count.
index_range partition(std::size_t samples, std::size_t rank, std::size_t count);

/// The indices of `range` in the order to visit them in `epoch`: ascending without `shuffle`,
/// otherwise a Fisher-Yates permutation drawn from rng(derive_seed(seed, epoch)), the same on
/// every run and machine. Throws std::length_error if range.end exceeds 2^32.
std::vector<std::uint32_t> epoch_order(index_range range, std::uint64_t seed, std::uint32_t epoch,
                                       bool shuffle);

} // namespace strom::compute
