@0xb023b96c0379dab0;
# One encoded model update as it travels between nodes (gradient sharing, averaging, KVStore
# pushes). Built into one pre-sized segment and read in place; see compute/strom/compute/frames/.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strom::schema");

# How the payload is encoded. The ordinals equal strom::compute::encoding's values.
enum Encoding {
  threshold @0;   # sparse signed 1-based int32 indices, each +/- threshold
  bitmap @1;      # 2 bits per element
  twoBit @2;      # MXNet 2-bit: 16 values per 32-bit word
  denseFp32 @3;   # every element as a float
  denseFp16 @4;   # every element as an IEEE half
  blocks @5;      # parts of the buffer, each its own encoding and magnitude (block_codec.hpp)
}

# Whether `payload` is compressed.
enum Compression {
  none @0;
  lz4 @1;         # one LZ4 block; `rawPayloadBytes` is its exact decompressed size
}

struct UpdateFrame {
  originNode @0 :UInt64;       # node that encoded the update
  worker @1 :UInt32;           # worker slot on that node
  sequence @2 :UInt64;         # per-origin sequence number, for de-duplication
  iteration @3 :UInt64;        # training iteration the update belongs to
  epoch @4 :UInt32;
  encoding @5 :Encoding;
  threshold @6 :Float32;       # magnitude of each sent step (0 for dense; blocks: for display only)
  elementCount @7 :UInt64;     # elements of the flat buffer the payload covers
  offset @8 :UInt64;           # first covered element in the flat buffer
  compression @9 :Compression;
  rawPayloadBytes @10 :UInt32; # payload size before compression
  payload @11 :Data;           # at most 2^29 - 1 bytes: bigger slices are split by the caller
  # CRC-32 (zlib's) of the fields above and the payload as stored: a damaged frame is refused
  # before anything of it is applied. Without it one flipped exponent bit in a blocks scale or
  # an fp16 value moves a replica by up to 1e38 or 65504 per element (measured: the
  # corrupt_frames scenario, 5% of one node's frames, 22% test accuracy instead of 85%).
  checksum @12 :UInt32;
}
