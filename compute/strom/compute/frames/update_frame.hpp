#pragma once
// Building, reading and applying `UpdateFrame` messages (schema/update.capnp). The builder
// writes one encoded update into a single pre-sized segment; the reader treats every frame as
// hostile and turns anything malformed into an error, never an exception or a stray write.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/codecs/encoded_update.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// Where an update comes from and which slice of the flat buffer it covers.
struct frame_header {
  std::uint64_t origin_node = 0;  ///< node that encoded the update
  std::uint32_t worker = 0;       ///< worker slot on that node
  std::uint64_t sequence = 0;     ///< per-origin sequence number (de-duplication key)
  std::uint64_t iteration = 0;    ///< training iteration
  std::uint32_t epoch = 0;        ///< training epoch
  std::uint64_t offset = 0;       ///< first element of the flat buffer the payload covers
};

/// Whether the builder tries LZ4 on the payload.
enum class lz4_policy {
  never,         ///< store the payload as it is
  when_smaller,  ///< compress when that saves at least lz4_min_saving_divisor-th of the bytes
};

/// LZ4 is kept only when it saves at least 1/8 of the payload: a smaller gain does not repay
/// the receiver's extra decompression pass over the payload.
inline constexpr std::size_t lz4_min_saving_divisor = 8;

/// LZ4's largest expansion: a run-length byte of 255 in the block format adds 255 output
/// bytes per input byte. A frame claiming more is forged (an "LZ4 bomb") and is refused
/// before any allocation.
inline constexpr std::size_t lz4_max_expansion = 255;

/// How the payload is stored in the frame.
enum class frame_compression : std::uint8_t {
  none = 0,  ///< payload stored as encoded
  lz4 = 1,   ///< one LZ4 block
};

/// Builder choices.
struct frame_options {
  lz4_policy lz4 = lz4_policy::never;  ///< whether to try LZ4
};

/// Reused scratch space for decompressed payloads; one per receiving thread.
struct frame_workspace {
  std::vector<std::uint32_t> payload;  ///< 4-byte aligned, as decode_add requires
};

/// A validated frame's fields; `payload` points into the frame or the workspace.
struct update_frame_view {
  frame_header header;                                  ///< origin, sequence, slice offset
  encoding enc = encoding::threshold;                   ///< how the payload is encoded
  float threshold = 0.0f;                               ///< step magnitude (0 for dense)
  std::uint64_t elements = 0;                           ///< elements the payload covers
  frame_compression compression = frame_compression::none;  ///< how it was stored
  std::size_t stored_payload_bytes = 0;                 ///< payload bytes inside the frame
  std::span<const std::byte> payload;                   ///< decoded-ready payload (raw size)
};

/// Builds a frame holding `update` for the slice starting at `header.offset`. Refuses
/// payloads over max_payload_bytes (callers split larger slices) and slices whose end
/// overflows 64 bits.
result<frame> build_update_frame(const frame_header& header, const encoded_update& update,
                                 const frame_options& options = {});

/// Reads and validates a frame's header fields and payload. An LZ4 payload is decompressed
/// into `ws`; the view stays valid while `f` and `ws` live and `ws` is not reused.
result<update_frame_view> read_update_frame(const frame& f, frame_workspace& ws);

/// The header of `f` without checking anything else, its checksum included: whose step it
/// carries, for de-duplication and progress, even when its payload is damaged (relay.hpp,
/// trainer.cpp). Never a reason to apply anything.
result<frame_header> read_update_frame_header(const frame& f);

/// Reads `f` and adds its update into `model[offset, offset + elements)`. Refuses, leaving
/// `model` untouched, any frame whose slice does not fit `model` or whose payload does not
/// fit its encoding.
result<void> apply_update_frame(const frame& f, std::span<float> model, frame_workspace& ws);

/// The same for a frame already read (read_update_frame), without reading it again.
result<void> apply_update_frame(const update_frame_view& v, std::span<float> model);

} // namespace strom::compute
