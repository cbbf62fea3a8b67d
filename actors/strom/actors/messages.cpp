#include "strom/actors/messages.hpp"

#include <fmt/format.h>

#include "strom/actors/errors.hpp"

namespace strom::actors {

namespace detail {

caf::error load_frame(caf::deserializer& source, compute::frame& target, std::size_t max_bytes,
                      bool may_be_empty) {
  std::size_t bytes = 0;
  if (auto err = source.begin_sequence(bytes))
    return err;
  if (bytes == 0 && may_be_empty) {
    target = compute::frame{};
    return source.end_sequence();
  }
  // The length comes from the peer: check it before allocating anything.
  if (auto ok = compute::frame::check_size(bytes); !ok)
    return caf::make_error(caf::sec::invalid_argument, "shared_frame: " + ok.err().message);
  if (bytes > max_bytes)
    return caf::make_error(caf::sec::invalid_argument,
                           "frame of " + std::to_string(bytes) + " bytes exceeds the " +
                             std::to_string(max_bytes) + " bytes this message may carry");
  auto words = compute::allocate_frame_words(bytes / sizeof(capnp::word));
  if (auto err = source.apply_raw(bytes, words.get()))
    return err;
  if (auto err = source.end_sequence())
    return err;
  auto made = compute::frame::from_bytes({reinterpret_cast<const std::byte*>(words.get()), bytes},
                                         std::shared_ptr<const void>{words, words.get()});
  if (!made)
    return caf::make_error(caf::sec::invalid_argument, "shared_frame: " + made.err().message);
  target = std::move(*made);
  return caf::none;
}

caf::error save_frame(caf::serializer& sink, const compute::frame& value) {
  std::size_t bytes = value.size();
  if (auto err = sink.begin_sequence(bytes))
    return err;
  // apply_raw takes a mutable pointer for both directions; a serializer only reads it.
  if (bytes > 0)
    if (auto err = sink.apply_raw(bytes, const_cast<std::byte*>(value.bytes().data())))
      return err;
  return sink.end_sequence();
}

} // namespace detail

std::string describe(const node_status& node) {
  return fmt::format("node {} ({} at {})", node.node_id, node.name, node.address);
}

void register_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::strom>();
  register_error_category(cfg);
}

} // namespace strom::actors
