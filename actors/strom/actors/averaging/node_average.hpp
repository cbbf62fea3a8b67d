#pragma once
// A node's share of parameter averaging (parameter_averaging.hpp), shared by its trainers like
// the node's framer (thread-safe): each trainer adds its contribution to the node's sum of an
// average, the last to add frames the sum for the other nodes, and every trainer reads the sum
// when it takes the average. The node's workers then send one contribution instead of one
// each, and decode none of each other's.

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace strom::actors {

/// Which average of which round.
struct average_key {
  std::uint32_t round = 0;
  std::uint64_t index = 0;
  friend bool operator==(const average_key&, const average_key&) = default;
};

/// The node's sums of its workers' contributions (thread-safe).
class node_average {
public:
  /// Sums for `workers` trainers' contributions of `elements` elements (contribution_elements).
  node_average(std::uint32_t workers, std::size_t elements);

  /// Adds a contribution (weight 1, `parameters`, then `updater_state`, which may be empty) to
  /// average `key`; true for the node's last worker to add: the sum is complete.
  bool add(const average_key& key, std::span<const float> parameters,
           std::span<const float> updater_state);

  /// The complete sum of average `key` (its weight first). It stays valid until a worker adds
  /// to the average two after it: no worker does before every worker of the node took `key`
  /// (a worker's next contribution waits for its average, which waits for every worker's).
  std::span<const float> sum(const average_key& key) const;

  /// Whether every worker of the node added to average `key`.
  bool complete(const average_key& key) const;

private:
  struct slot {
    average_key key;
    std::uint32_t added = 0;
    std::vector<float> sum;
  };

  const std::uint32_t workers_;
  mutable std::mutex mutex_;
  std::array<slot, 2> slots_;  // by index parity: the average under way and the one after
};

} // namespace strom::actors
