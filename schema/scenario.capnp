@0xd6a4f0f3c2b1e957;
# A simulation scenario for `strom sim FILE` (issue #18), in Cap'n Proto text format like job
# files: a cluster, a job, a mode, events at chosen moments and the expectations checked at
# the end. `live` runs the product's real actors in one process, in virtual time; `model` runs
# a discrete-event model of the same topology and protocol with costs measured by
# `strom sim calibrate JOB` (a Calibration, below) or given in the scenario. Node names in
# events are the cluster's: those of `nodes.list`, or n1..nN for `nodes.count`.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strom::schema");

using Job = import "job.capnp".Job;

struct Scenario {
  name @0 :Text;
  cluster @1 :Cluster;
  job @2 :JobSource;
  union {                  # how long the job runs; neither: the job's training.epochs
    fromJob @3 :Void;
    epochs @4 :UInt32;     # passes over the training set (model: Calibration.samplesPerEpoch)
    steps @5 :UInt64;      # steps of every worker (one batch each)
  }
  mode @6 :SimMode = model;
  events @7 :List(Event);
  expectations @8 :List(Expectation);
  costs @9 :Costs;         # what a step costs on a node of speed 1 (live: in virtual time)
  model @10 :ModelOptions;
}

enum SimMode {
  live @0;   # the product's actors, one actor system per node, in one process
  model @1;  # the discrete-event model: no training, thousands of nodes
}

# -- the cluster -----------------------------------------------------------------------------

struct Cluster {
  nodes :union {
    count @0 :UInt32;          # n1..nN, all alike
    list @1 :List(Node);       # named nodes, each with its own speed, workers and link
  }
  workersPerNode @2 :UInt32 = 1;   # trainers on each node (a node's own `workers` overrides)
  link @3 :Link;                   # every node's link unless the node names its own
  topology @4 :SimTopology = fromJob;
  fanout @5 :UInt32 = 0;           # mesh children a node; 0: the job's distributed.fanout
  heartbeatIntervalSeconds @6 :Float64 = 1.0;   # strom's defaults (actors/timing.hpp)
  heartbeatTimeoutSeconds @7 :Float64 = 10.0;
}

struct Node {
  name @0 :Text;
  speedFactor @1 :Float64 = 1.0;  # 2.0: computes a step in half the time; 0.5: in twice
  workers @2 :UInt32 = 0;         # 0: the cluster's workersPerNode
  link @3 :Link;                  # used when `ownLink` is true
  ownLink @4 :Bool = false;
  # A server node holds parameter shards of a kvstore job (strom node --role server) instead of
  # training; live mode only (the model does not model parameter servers).
  server @5 :Bool = false;
}

# A node's network link (its NIC and the path to its peers).
struct Link {
  latencySeconds @0 :Float64 = 0.0001;      # one way (100 us: one switch hop in a rack)
  bandwidthGbitPerSecond @1 :Float64 = 10;  # each direction
  loss @2 :Float64 = 0;           # fraction of frames lost and sent again
  duplication @3 :Float64 = 0;    # fraction of frames delivered twice
  reordering @4 :Float64 = 0;     # fraction of frames overtaken by the next
}

enum SimTopology {
  fromJob @0;  # the job's distributed.topology
  plain @1;
  mesh @2;
  auto @3;
}

# -- the job ---------------------------------------------------------------------------------

struct JobSource {
  union {
    path @0 :Text;   # a job file, relative to the scenario's folder
    inline @1 :Job;  # the job itself
  }
}

# -- events ----------------------------------------------------------------------------------

# When an event happens, the same in both modes. An event past the job's end is refused
# before the run, and one that never happened (a time after the job ended) fails it.
struct Moment {
  union {
    step @0 :UInt64;       # the job's k-th step: its workers' steps (a batch each) counted
                           # together from the job's start over all epochs, so 4 workers' 10th
                           # batches are steps 37 to 40 (unlike the length's `steps`, which
                           # counts a worker's); the event happens as that step starts
    epoch @1 :UInt32;      # the start of the k-th epoch (1: the job's start), its first step
    seconds @2 :Float64;   # simulated seconds since the job started
  }
}

struct Event {
  at @0 :Moment;
  union {
    kill @1 :Kill;                 # the node's process dies
    hang @2 :NodeRef;              # the node stops answering (SIGSTOP)
    resume @3 :NodeRef;            # a hung node goes on (it is told it was dropped)
    restart @4 :NodeRef;           # a killed node starts again and joins as a new incarnation
    slowDown @5 :SlowDown;         # the node computes `factor` times slower from now on
    partition @6 :Partition;       # the network splits into groups
    heal @7 :Void;                 # every partition ends
    frameFault @8 :FrameFault;     # frames between chosen nodes are damaged
    join @9 :Join;                 # a new node joins the running job
    schedulerKill @10 :Void;       # the scheduler's process dies
    schedulerRestart @11 :Void;    # it starts again from its state folder
  }
}

struct NodeRef {
  node @0 :Text;
}

struct Kill {
  node @0 :Text;
  # false: the process dies and its connections close, which the scheduler sees at once (a
  # down message); true: the machine vanishes (power, cable) and only the heartbeat timeout
  # tells.
  silent @1 :Bool = false;
}

struct SlowDown {
  node @0 :Text;
  factor @1 :Float64 = 2.0;      # step time multiplied by this (1: back to normal)
}

struct Partition {
  groups @0 :List(List(Text));   # node names; the scheduler stays with the first group
}

struct FrameFault {
  from @0 :List(Text);           # frames sent by these nodes (empty: any node) ...
  to @1 :List(Text);             # ... to these nodes (empty: any node)
  kind @2 :FrameFaultKind;
  rate @3 :Float64 = 0.05;       # fraction of those frames
  delaySeconds @4 :Float64 = 0;  # for `delay`: how much later they arrive
  untilSeconds @5 :Float64 = 0;  # the fault ends at this simulated time; 0: never
}

enum FrameFaultKind {
  drop @0;
  duplicate @1;
  reorder @2;
  delay @3;
  corrupt @4;
}

struct Join {
  node @0 :Node;                 # the new node; its name must be new
}

# -- expectations ----------------------------------------------------------------------------

struct Expectation {
  union {
    completes @0 :Void;                    # the job ends with all its epochs or steps
    fails @1 :Void;                        # the job fails
    accuracyAtLeast @2 :Float64;           # test accuracy (live mode), 0..1
    nothingAppliedTwice @3 :Void;          # no trainer applied a frame twice
    detectionWithinSeconds @4 :Float64;    # every lost node was found lost within this
    restoreWithinSeconds @5 :Float64;      # every joining node trained within this of its join
    samplesRedoneAtMost @6 :UInt64;
    samplesPerSecondAtLeast @7 :Float64;
    scalingEfficiency @8 :Range;           # against one worker alone at speed 1
  }
}

struct Range {
  atLeast @0 :Float64;
  atMost @1 :Float64;
}

# -- model mode ------------------------------------------------------------------------------

# What one step costs on a node of speed 1, from a calibration file or given.
struct Costs {
  union {
    calibration @0 :Text;   # a file `strom sim calibrate` wrote, relative to the scenario
    given @1 :GivenCosts;
  }
  density @2 :Float64 = 0;  # fraction of the elements a frame carries; 0: the calibration's
                            # measured density (given costs: the frame bytes are given)
}

struct GivenCosts {
  stepSeconds @0 :Float64;        # forward, backward and update of one batch
  encodeSeconds @1 :Float64;      # threshold-encoding one worker's update
  decodeSeconds @2 :Float64;      # decoding and applying one frame
  overheadSeconds @3 :Float64;    # anything else a step costs a worker
  frameBytes @4 :UInt64;          # one worker's update frame on the wire
  batchSize @5 :UInt32 = 0;       # 0: the job's training.batchSize
  parameters @6 :UInt64 = 0;      # floats in the model (snapshots); 0: the job's network
  samplesPerEpoch @7 :UInt64 = 60000;
  tlsSealBytesPerSecond @8 :Float64 = 0;  # TLS encryption of a frame (strom sim --tls-*)
  tlsOpenBytesPerSecond @9 :Float64 = 0;  # TLS decryption of a frame
}

struct ModelOptions {
  assumptions @0 :Assumptions = strom;
}

enum Assumptions {
  # strom's design: a worker decodes every other worker's frame (not its own, which it
  # applied at once), frames travel while the next step computes within the job's staleness
  # bound, and the topology's links carry them.
  strom @0;
  # Deeplearning4j's scalability form: every worker decodes every worker's update, its own
  # included, each step's encode, decode and overhead add to its compute, and the network
  # costs nothing beyond that.
  deeplearning4j @1;
}

# -- calibration -----------------------------------------------------------------------------

# This machine's costs for one job, written by `strom sim calibrate JOB -o FILE`.
struct Calibration {
  job @0 :Text;                 # the job's name
  machine @1 :Text;             # where it was measured (host name, cores)
  batchSize @2 :UInt32;
  parameters @3 :UInt64;        # floats in the model
  updaterStateFloats @4 :UInt64;
  samplesPerEpoch @5 :UInt64;
  stepSeconds @6 :Float64;      # one batch, one worker, median of the measured steps
  measuredDensity @7 :Float64;  # the density the job's threshold settled at
  densities @8 :List(DensityCosts);  # ascending density
  tlsSealBytesPerSecond @9 :Float64;  # sealing a frame into TLS 1.3 records (0: not measured)
  tlsOpenBytesPerSecond @10 :Float64; # opening them (links of strom sim --tls-*)
}

struct DensityCosts {
  density @0 :Float64;
  encodeSeconds @1 :Float64;    # encode one update of this density (scan and frame)
  decodeSeconds @2 :Float64;    # read one frame and apply it to a replica
  frameBytes @3 :UInt64;        # the frame as it travels
}
