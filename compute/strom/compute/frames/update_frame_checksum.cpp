#include "strom/compute/frames/update_frame_checksum.hpp"

#include <bit>

#include <zlib.h>

#include "strom/compute/codecs/little_endian.hpp"

namespace strom::compute {

std::uint32_t update_frame_checksum(schema::UpdateFrame::Reader frame,
                                    capnp::Data::Reader payload) {
  // Widened to 64 bits each; their bytes are the same on every strom host (little_endian.hpp).
  const std::uint64_t fields[] = {frame.getOriginNode(),
                                  frame.getWorker(),
                                  frame.getSequence(),
                                  frame.getIteration(),
                                  frame.getEpoch(),
                                  static_cast<std::uint64_t>(frame.getEncoding()),
                                  std::bit_cast<std::uint32_t>(frame.getThreshold()),
                                  frame.getElementCount(),
                                  frame.getOffset(),
                                  static_cast<std::uint64_t>(frame.getCompression()),
                                  frame.getRawPayloadBytes()};
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(fields), sizeof fields);
  crc = crc32(crc, payload.begin(), static_cast<uInt>(payload.size()));
  return static_cast<std::uint32_t>(crc);
}

} // namespace strom::compute
