@0xc3e1f0a27b5d9e41;
# A trainer's replica state as a live peer sends it to a node that joins a running job
# (issue 17, "Restore"): the flat fp32 buffers a checkpoint holds, the worker's sharing
# state (threshold encoder residual and where its policy stands) and the progress needed to
# tell later which update frames are newer than the snapshot. A Snapshot is encoded once and
# sent as a sequence of SnapshotChunk frames, each small enough not to stall the sending
# node's single middleman thread (shared/CAF-0.17-NOTES.md).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strom::schema");

using Progress = import "checkpoint.capnp".Progress;

struct Snapshot {
  formatVersion @0 :UInt32;
  parameters @1 :List(Data);    # little-endian fp32, chunked as in a Checkpoint
  updaterState @2 :List(Data);
  layerState @3 :List(Data);
  progress @4 :Progress;        # epochs completed and updater steps taken (a checkpoint's)
  batchesInEpoch @5 :UInt64;    # steps of the current epoch already taken
  samplesInEpoch @6 :UInt64;
  origins @7 :List(SnapshotOriginClock);
  sharing @8 :SnapshotSharing;          # absent when the worker does not share updates
}

# How far one origin's frames got in what the replica holds.
struct SnapshotOriginClock {
  origin @0 :UInt64;
  clockEpoch @1 :UInt32;
  clock @2 :UInt64;
  drained @3 :UInt32;
}

# The threshold encoder's state: its residual and where its policy and counters stand.
struct SnapshotSharing {
  residual @0 :List(Data);
  threshold @1 :Float32;
  iteration @2 :UInt64;
  lastEncoding @3 :UInt8;
  lastDensity @4 :Float64;
  clipped @5 :Float64;
}

# One piece of an encoded Snapshot.
struct SnapshotChunk {
  snapshotId @0 :UInt64;
  index @1 :UInt32;        # 0-based
  count @2 :UInt32;        # chunks in the snapshot
  totalBytes @3 :UInt64;   # bytes of the encoded Snapshot
  crc32 @4 :UInt32;        # zlib's crc32 of the whole encoded Snapshot; last chunk only
  payload @5 :Data;
}
