#pragma once
// The two choices a parameter-server job or a kv_store makes (MXNet's kvstore type and
// gradient compression), apart from the actors that act on them so that the embedding API's
// options (runtime/kv_store.hpp) can name them without the actors' headers.

#include <cstdint>

namespace strom::actors {

/// How a shard merges pushes (MXNet's kvstore types).
enum class kv_sync : std::uint8_t {
  dist_sync,   ///< one update a step from every worker's push
  dist_async,  ///< one update a push
};

/// How a kvstore worker encodes its pushes (MXNet's gradient_compression, and strom's own).
enum class kv_compression : std::uint8_t {
  none,       ///< dense fp32
  two_bit,    ///< MXNet's 2-bit: +-threshold or 0 a value, residual on the worker
  threshold,  ///< strom's threshold encoding, residual on the worker
};

/// "none", "2bit" or "threshold".
const char* to_string(kv_compression compression) noexcept;

} // namespace strom::actors
