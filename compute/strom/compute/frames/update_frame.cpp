#include "strom/compute/frames/update_frame.hpp"

#include <cstring>
#include <limits>
#include <vector>

#include <capnp/message.h>
#include <fmt/format.h>
#include <kj/exception.h>
#include <lz4.h>

#include "strom/compute/codecs/block_codec.hpp"
#include "strom/compute/frames/update_frame_checksum.hpp"
#include "strom/schema/update.capnp.h"

namespace strom::compute {

namespace {

using schema::UpdateFrame;

// The schema enum mirrors strom::compute::encoding ordinal for ordinal.
static_assert(static_cast<int>(schema::Encoding::THRESHOLD) == static_cast<int>(encoding::threshold));
static_assert(static_cast<int>(schema::Encoding::BITMAP) == static_cast<int>(encoding::bitmap));
static_assert(static_cast<int>(schema::Encoding::TWO_BIT) == static_cast<int>(encoding::two_bit));
static_assert(static_cast<int>(schema::Encoding::DENSE_FP32) == static_cast<int>(encoding::dense_fp32));
static_assert(static_cast<int>(schema::Encoding::DENSE_FP16) == static_cast<int>(encoding::dense_fp16));
static_assert(static_cast<int>(schema::Encoding::BLOCKS) == static_cast<int>(encoding::blocks));
static_assert(static_cast<int>(schema::Compression::LZ4) == static_cast<int>(frame_compression::lz4));

constexpr auto last_encoding_value = static_cast<unsigned>(last_encoding);
constexpr unsigned last_compression = static_cast<unsigned>(frame_compression::lz4);

/// No encoding but blocks spends more than 4 bytes per covered element (dense fp32 is the
/// widest; the sparse ones send at most one 4-byte index per element); blocks add a header of
/// five words per block, at most one block per element. Bounds what a frame may claim before
/// anything is allocated for it.
constexpr std::size_t max_payload_bytes_per_element = 4;
constexpr std::size_t max_blocks_payload_bytes_per_element = 4 * (1 + block_header_words);

/// Root struct, then its Data blob: two levels. A little slack, nothing more.
constexpr int update_frame_nesting_limit = 4;

/// Words of the root pointer plus the UpdateFrame struct.
constexpr std::size_t fixed_segment_words =
    1 + UpdateFrame::_capnpPrivate::dataWordSize + UpdateFrame::_capnpPrivate::pointerCount;

/// A MessageBuilder over one caller-provided segment. Unlike MallocMessageBuilder it does not
/// zero that segment when destroyed, so the built bytes outlive the builder. Should the size
/// bound ever be wrong, it hands Cap'n Proto spill segments so the build can finish; the
/// caller then sees more than one segment and refuses the frame.
class single_segment_builder final : public capnp::MessageBuilder {
public:
  explicit single_segment_builder(kj::ArrayPtr<capnp::word> space) : space_(space) {}

  kj::ArrayPtr<capnp::word> allocateSegment(unsigned minimum_size) override {
    if (!space_given_) {
      space_given_ = true;
      if (minimum_size <= space_.size())
        return space_;
    }
    auto spill = kj::heapArray<capnp::word>(minimum_size);
    std::memset(spill.begin(), 0, spill.size() * sizeof(capnp::word));
    spills_.push_back(kj::mv(spill));
    return spills_.back();
  }

private:
  kj::ArrayPtr<capnp::word> space_;
  bool space_given_ = false;
  std::vector<kj::Array<capnp::word>> spills_;
};

result<void> check_payload_fits_elements(const char* what, encoding enc,
                                         std::size_t payload_bytes, std::uint64_t elements) {
  const std::size_t per_element = enc == encoding::blocks ? max_blocks_payload_bytes_per_element
                                                          : max_payload_bytes_per_element;
  // A blocks payload starts with its block count: one word more than its elements need.
  const std::uint64_t allowed = elements * per_element + (enc == encoding::blocks ? 4 : 0);
  if (elements > std::numeric_limits<std::uint64_t>::max() / per_element - 1
      || payload_bytes > allowed)
    return error{fmt::format("{}: payload of {} bytes for {} elements exceeds {} bytes per "
                             "element", what, payload_bytes, elements, per_element)};
  return success();
}

/// The frame's fields with the payload as stored (possibly compressed).
struct stored_update {
  update_frame_view view;
  std::size_t raw_payload_bytes = 0;
};

/// Calls `read(root)` on the frame's UpdateFrame, read in place under Cap'n Proto's limits;
/// a message those refuse is an error.
template <class T, class Read>
result<T> with_root(const frame& f, Read read) {
  const auto segment = f.segment();
  if (segment.empty())
    return error{"update frame: the frame is empty"};
  capnp::ReaderOptions options;
  // An honest UpdateFrame reads each of its words once, and Cap'n Proto charges one word more
  // (measured with 0.9.2: a W-word segment needs a limit of W + 1). Anything beyond that is
  // pointers forged to alias the same words.
  options.traversalLimitInWords = segment.size() + 1;
  options.nestingLimit = update_frame_nesting_limit;
  const kj::ArrayPtr<const capnp::word> segments[] = {{segment.data(), segment.size()}};
  try {
    capnp::SegmentArrayMessageReader reader(kj::arrayPtr(segments, 1), options);
    return read(reader.getRoot<UpdateFrame>());
  } catch (const kj::Exception& e) {
    return error{fmt::format("update frame: malformed message: {}",
                             e.getDescription().cStr())};
  }
}

frame_header header_of(UpdateFrame::Reader root) {
  return {root.getOriginNode(), root.getWorker(), root.getSequence(),
          root.getIteration(), root.getEpoch(), root.getOffset()};
}

result<stored_update> read_stored(const frame& f) {
  return with_root<stored_update>(f, [](UpdateFrame::Reader root) -> result<stored_update> {
    const auto payload = root.getPayload();
    if (const auto computed = update_frame_checksum(root, payload);
        computed != root.getChecksum())
      return error{fmt::format("update frame: checksum {:08x} does not match the frame's "
                               "{:08x}: the frame was damaged",
                               computed, root.getChecksum())};
    stored_update out;
    update_frame_view& v = out.view;
    v.header = header_of(root);
    const auto enc = static_cast<unsigned>(root.getEncoding());
    if (enc > last_encoding_value)
      return error{fmt::format("update frame: unknown encoding value {}", enc)};
    v.enc = static_cast<encoding>(enc);
    const auto comp = static_cast<unsigned>(root.getCompression());
    if (comp > last_compression)
      return error{fmt::format("update frame: unknown compression value {}", comp)};
    v.compression = static_cast<frame_compression>(comp);
    v.threshold = root.getThreshold();
    v.elements = root.getElementCount();
    v.payload = {reinterpret_cast<const std::byte*>(payload.begin()), payload.size()};
    v.stored_payload_bytes = payload.size();
    out.raw_payload_bytes = root.getRawPayloadBytes();
    return out;
  });
}

/// Checks the claimed raw size and, for LZ4, decompresses into `ws` and repoints the view.
result<void> materialise_payload(stored_update& s, frame_workspace& ws) {
  update_frame_view& v = s.view;
  const std::size_t raw = s.raw_payload_bytes;
  if (raw > max_payload_bytes)
    return error{fmt::format("update frame: rawPayloadBytes {} exceeds the cap of {}", raw,
                             max_payload_bytes)};
  if (auto fits = check_payload_fits_elements("update frame", v.enc, raw, v.elements); !fits)
    return fits;
  if (v.compression == frame_compression::none) {
    if (raw != v.stored_payload_bytes)
      return error{fmt::format("update frame: rawPayloadBytes {} but the uncompressed payload "
                               "holds {} bytes", raw, v.stored_payload_bytes)};
    return success();
  }
  const std::size_t stored = v.stored_payload_bytes;
  if (stored == 0 || raw > stored * lz4_max_expansion)
    return error{fmt::format("update frame: LZ4 payload of {} bytes cannot expand to the "
                             "claimed {} bytes", stored, raw)};
  ws.payload.resize((raw + sizeof(std::uint32_t) - 1) / sizeof(std::uint32_t));
  auto* out = reinterpret_cast<char*>(ws.payload.data());
  const int produced = LZ4_decompress_safe(reinterpret_cast<const char*>(v.payload.data()), out,
                                           static_cast<int>(stored), static_cast<int>(raw));
  if (produced < 0)
    return error{fmt::format("update frame: LZ4 payload of {} bytes is corrupt (error {})",
                             stored, produced)};
  if (static_cast<std::size_t>(produced) != raw)
    return error{fmt::format("update frame: LZ4 payload decompresses to {} bytes, but "
                             "rawPayloadBytes says {}", produced, raw)};
  v.payload = {reinterpret_cast<const std::byte*>(out), raw};
  return success();
}

/// Refuses a slice that does not fit a model of `size` elements.
result<void> check_slice(const update_frame_view& v, std::uint64_t size) {
  if (v.header.offset > size || v.elements > size - v.header.offset)
    return error{fmt::format("update frame: slice [{}, +{}) does not fit a model of {} elements",
                             v.header.offset, v.elements, size)};
  return success();
}

/// Adds the payload of a checked view into its slice of `model`.
result<void> decode_slice(const update_frame_view& v, std::span<float> model) {
  if (auto ok = decode_add(v.enc, v.threshold, v.payload, model.subspan(v.header.offset,
                                                                         v.elements)); !ok)
    return error{fmt::format("update frame (origin {}, sequence {}): {}", v.header.origin_node,
                             v.header.sequence, ok.err().message)};
  return success();
}

} // namespace

result<frame> build_update_frame(const frame_header& header, const encoded_update& update,
                                 const frame_options& options) {
  const std::size_t raw = update.payload.size();
  if (raw > max_payload_bytes)
    return error{fmt::format("update frame: payload of {} bytes exceeds the Data limit of {} "
                             "bytes; split the slice", raw, max_payload_bytes)};
  if (auto fits = check_payload_fits_elements("update frame", update.enc, raw,
                                              update.elements);
      !fits)
    return fits.err();
  if (header.offset > std::numeric_limits<std::uint64_t>::max() - update.elements)
    return error{fmt::format("update frame: slice at offset {} of {} elements overflows",
                             header.offset, update.elements)};
  if (static_cast<unsigned>(update.enc) > last_encoding_value)
    return error{fmt::format("update frame: unknown encoding value {}",
                             static_cast<unsigned>(update.enc))};

  // Sized up front: LZ4 is only kept when smaller than the raw payload, so the raw size bounds
  // the Data blob either way and the message always fits one segment.
  const std::size_t segment_words = fixed_segment_words + (raw + 7) / 8;
  auto storage = allocate_frame_words(1 + segment_words);
  try {
    single_segment_builder builder({storage.get() + 1, segment_words});
    auto root = builder.initRoot<UpdateFrame>();
    root.setOriginNode(header.origin_node);
    root.setWorker(header.worker);
    root.setSequence(header.sequence);
    root.setIteration(header.iteration);
    root.setEpoch(header.epoch);
    root.setOffset(header.offset);
    root.setEncoding(static_cast<schema::Encoding>(update.enc));
    root.setThreshold(update.threshold);
    root.setElementCount(update.elements);
    root.setRawPayloadBytes(static_cast<std::uint32_t>(raw));
    auto data = root.initPayload(static_cast<unsigned>(raw));

    int compressed = 0;
    if (options.lz4 == lz4_policy::when_smaller && raw > 0) {
      // Compress straight into the blob, with room only for a worthwhile result: LZ4 gives up
      // (returns 0) as soon as the output would not save lz4_min_saving_divisor-th.
      const std::size_t worthwhile = raw - raw / lz4_min_saving_divisor;
      compressed = LZ4_compress_default(reinterpret_cast<const char*>(update.payload.data()),
                                        reinterpret_cast<char*>(data.begin()),
                                        static_cast<int>(raw), static_cast<int>(worthwhile));
    }
    if (compressed > 0) {
      root.setCompression(schema::Compression::LZ4);
      // Shrinking the last object of the segment gives its tail back to the segment.
      auto orphan = root.disownPayload();
      orphan.truncate(static_cast<unsigned>(compressed));
      root.adoptPayload(kj::mv(orphan));
    } else if (raw > 0) {
      std::memcpy(data.begin(), update.payload.data(), raw);
    }

    root.setChecksum(update_frame_checksum(root.asReader(), root.asReader().getPayload()));
    const auto segments = builder.getSegmentsForOutput();
    if (segments.size() != 1 || segments[0].begin() != storage.get() + 1)
      return error{fmt::format("update frame: message took {} segments instead of one "
                               "(size bound of {} words was wrong)", segments.size(),
                               segment_words)};
    const auto used_words = static_cast<std::uint32_t>(segments[0].size());
    const std::uint32_t stream_header[2] = {0, used_words};  // segment count - 1, words
    std::memcpy(storage.get(), stream_header, sizeof stream_header);
    const std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(storage.get()),
                                           (1 + std::size_t{used_words}) * sizeof(capnp::word)};
    return frame::from_bytes(bytes, std::move(storage));
  } catch (const kj::Exception& e) {
    return error{fmt::format("update frame: building failed: {}", e.getDescription().cStr())};
  }
}

result<update_frame_view> read_update_frame(const frame& f, frame_workspace& ws) {
  auto stored = read_stored(f);
  if (!stored)
    return stored.err();
  if (auto ok = materialise_payload(*stored, ws); !ok)
    return ok.err();
  return stored->view;
}

result<frame_header> read_update_frame_header(const frame& f) {
  return with_root<frame_header>(
    f, [](UpdateFrame::Reader root) -> result<frame_header> { return header_of(root); });
}

result<void> apply_update_frame(const frame& f, std::span<float> model, frame_workspace& ws) {
  auto stored = read_stored(f);
  if (!stored)
    return stored.err();
  // Checked before decompressing, so a forged slice costs no allocation.
  if (auto ok = check_slice(stored->view, model.size()); !ok)
    return ok;
  if (auto ok = materialise_payload(*stored, ws); !ok)
    return ok;
  return decode_slice(stored->view, model);
}

result<void> apply_update_frame(const update_frame_view& v, std::span<float> model) {
  if (auto ok = check_slice(v, model.size()); !ok)
    return ok;
  return decode_slice(v, model);
}

} // namespace strom::compute
