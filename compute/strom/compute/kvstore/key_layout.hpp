#pragma once
// Where a model's parameters live in a parameter-server job (MXNet's KVStore): one key per
// parameter array (a layer's weights, its biases), a key below the big-array bound on one
// server chosen by a stable hash of the key, a larger one split evenly across all servers
// (ps-lite's bigarray_bound). Every worker and server computes the same layout from the
// model and the server count, so nothing about it travels.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strom/compute/model.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// MXNet's default MXNET_KVSTORE_BIGARRAY_BOUND: keys of at least this many elements are
/// split across every server.
inline constexpr std::size_t default_big_array_bound = 1'000'000;

/// One parameter array: a contiguous range of the model's flat parameter buffer.
struct parameter_key {
  std::uint32_t key = 0;   ///< index in the model's key list
  std::size_t offset = 0;  ///< first element in the flat buffer
  std::size_t count = 0;   ///< elements
};

/// A range of one key held by one server: the unit a parameter_shard actor owns.
struct key_range {
  std::uint32_t key = 0;
  std::uint32_t part = 0;    ///< 0 unless the key is split: its piece, 0..servers-1
  std::uint32_t server = 0;  ///< index among the job's servers
  std::size_t offset = 0;    ///< first element in the flat buffer
  std::size_t count = 0;     ///< elements
};

/// The model's parameter arrays, in buffer order: each layer's slice split at its
/// regularized range (weights) into non-empty pieces (weights, biases).
std::vector<parameter_key> parameter_keys(const model& net);

/// The server (of `servers`) that holds an unsplit key: a stable hash, the same on every
/// machine and in every run.
std::uint32_t server_of(std::uint32_t key, std::uint32_t servers) noexcept;

/// Every key range of `keys` over `servers` servers, in buffer order. Errors name the value
/// (no servers; a bound of 0).
result<std::vector<key_range>> place_keys(const std::vector<parameter_key>& keys,
                                          std::uint32_t servers,
                                          std::size_t big_array_bound = default_big_array_bound);

} // namespace strom::compute
