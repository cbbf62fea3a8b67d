#pragma once
// How messages that carry a compute::frame serialize (CAF 0.17 inspect syntax): the frame's
// size for to_string, its bytes once on the wire, a checked length when loading. Shared by the
// protocol headers; no actor talks it by itself.

#include <cstddef>
#include <type_traits>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>

#include "strom/compute/frames/frame.hpp"

namespace strom::actors {

namespace detail {

/// True for CAF's binary serializer and deserializer (not the to_string inspector).
template <class F>
inline constexpr bool is_binary_inspector = std::is_same_v<typename F::result_type, caf::error>;

/// Loads a frame after checking the announced length (at most `max_bytes`) before allocating;
/// no bytes at all make an empty frame where `may_be_empty`.
caf::error load_frame(caf::deserializer& source, compute::frame& target,
                      std::size_t max_bytes = compute::max_frame_bytes,
                      bool may_be_empty = false);
/// Writes a frame as one length-prefixed byte sequence.
caf::error save_frame(caf::serializer& sink, const compute::frame& value);

/// A frame-carrying message: its size for to_string, its bytes on the wire, at most
/// `max_bytes` of them accepted when loading (or none, where `may_be_empty`).
template <class F>
typename F::result_type inspect_frame(F& f, const char* name, compute::frame& value,
                                      std::size_t max_bytes, bool may_be_empty = false) {
  if constexpr (!is_binary_inspector<F>)
    return f(caf::meta::type_name(name), value.size());
  else if constexpr (F::reads_state)
    return save_frame(f, value);
  else
    return load_frame(f, value, max_bytes, may_be_empty);
}

} // namespace detail

} // namespace strom::actors
