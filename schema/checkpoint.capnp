@0xa94aa7f833049042;
# A checkpoint: the job it belongs to, the flat fp32 buffers (parameters, updater state,
# non-trainable layer state such as batch-norm running statistics) and the progress made.
# Buffers are split into chunks because a Data field holds less than 2^29 bytes.

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
}

struct Progress {
  epoch @0 :UInt32;          # epochs completed
  iteration @1 :UInt64;      # updater steps taken
  samplesSeen @2 :UInt64;
  testAccuracy @3 :Float32;  # on the test set when saved; -1 if not evaluated
  testLoss @4 :Float32;
}
