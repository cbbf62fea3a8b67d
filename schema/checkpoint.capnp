@0xa94aa7f833049042;
# A checkpoint: the job it belongs to, the flat fp32 buffers (parameters, updater state,
# non-trainable layer state such as batch-norm running statistics) and the progress made.
# Buffers are split into chunks because a Data field holds less than 2^29 bytes.
# Every section carries a CRC-32 (zlib's crc32) checked on load, so a damaged file is refused
# with the damaged section named instead of being evaluated or trained on.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strom::schema");

using Job = import "job.capnp".Job;

struct Checkpoint {
  formatVersion @0 :UInt32;
  job @1 :Job;
  parameters @2 :List(Data);    # little-endian fp32, chunked
  updaterState @3 :List(Data);
  layerState @4 :List(Data);
  progress @5 :Progress;
  checksums @6 :SectionChecksums;
  run @7 :RunShape;             # format version 3 on; absent (zeros) in version 2
}

# What the run was started with besides its job, so that --resume needs no flags.
struct RunShape {
  workers @0 :UInt32;        # in all, over every node
  nodes @1 :UInt32;          # worker nodes
  servers @2 :UInt32;        # server nodes of a kvstore job
}

# CRC-32 (ISO-HDLC polynomial 0x04C11DB7, as zlib's crc32 computes it) of each section.
struct SectionChecksums {
  job @0 :UInt32;           # of the job's canonical Cap'n Proto encoding
  parameters @1 :UInt32;    # of the chunks' bytes, in order
  updaterState @2 :UInt32;
  layerState @3 :UInt32;
  progress @4 :UInt32;      # of the progress struct's canonical Cap'n Proto encoding
  run @5 :UInt32;           # of the run shape's canonical encoding (format version 3 on)
}

struct Progress {
  epoch @0 :UInt32;          # epochs completed
  iteration @1 :UInt64;      # updater steps taken
  samplesSeen @2 :UInt64;
  testAccuracy @3 :Float32;  # on the test set when saved; -1 if not evaluated
  testLoss @4 :Float32;
}
