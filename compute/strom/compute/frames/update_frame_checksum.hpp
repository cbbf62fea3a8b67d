#pragma once
// The checksum an update frame carries (schema/update.capnp, UpdateFrame.checksum): a frame
// damaged on its way is refused before anything of it is applied. CRC-32, not a signature:
// a peer that means harm can forge it, and the other checks still stand against that.

#include <cstdint>

#include "strom/schema/update.capnp.h"

namespace strom::compute {

/// CRC-32 (zlib's) of the frame's other fields, in schema order, and of its payload as stored,
/// `payload` (the caller's getPayload(): a reader under a traversal limit may read it once).
std::uint32_t update_frame_checksum(schema::UpdateFrame::Reader frame,
                                    capnp::Data::Reader payload);

} // namespace strom::compute
