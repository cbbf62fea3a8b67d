@0xcb52b65ea6dedb14;
# A training job. The same schema is the job-file format (Cap'n Proto text format, e.g.
# examples/fashion_mlp.job), the job that a client submits over the wire, and the job that a
# checkpoint records. Defaults follow Deeplearning4j / PyTorch where they agree.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strom::schema");

struct Job {
  name @0 :Text;
  network @1 :Network;
  data @2 :DataSpec;
  training @3 :Training;
  distributed @4 :Distributed;
}

# -- network ---------------------------------------------------------------------------------

struct Network {
  input @0 :InputShape;
  layers @1 :List(Layer);
  weightInit @2 :WeightInit = xavier;  # for layers whose own weightInit is `networkDefault`
}

struct InputShape {
  channels @0 :UInt32 = 1;
  height @1 :UInt32 = 1;
  width @2 :UInt32 = 1;
}

enum Activation {
  identity @0;
  relu @1;
  leakyRelu @2;
  tanh @3;
  sigmoid @4;
}

enum WeightInit {
  networkDefault @0;
  xavier @1;         # Glorot normal: stddev sqrt(2 / (fanIn + fanOut))
  xavierUniform @2;  # Glorot uniform: limit sqrt(6 / (fanIn + fanOut))
  he @3;             # He normal: stddev sqrt(2 / fanIn)
  heUniform @4;      # He uniform: limit sqrt(6 / fanIn)
}

struct Layer {
  union {
    dense @0 :Dense;
    convolution @1 :Convolution;
    maxPooling @2 :Pooling;
    averagePooling @3 :Pooling;
    relu @4 :Void;
    leakyRelu @5 :LeakyRelu;
    tanh @6 :Void;
    sigmoid @7 :Void;
    dropout @8 :Dropout;
    batchNormalization @9 :BatchNormalization;
    output @10 :Output;  # must be the last layer
  }
}

struct Dense {
  units @0 :UInt32;
  activation @1 :Activation = identity;
  weightInit @2 :WeightInit = networkDefault;
}

struct Convolution {
  filters @0 :UInt32;
  kernel @1 :UInt32 = 3;   # square kernel, kernel x kernel
  stride @2 :UInt32 = 1;
  padding @3 :UInt32 = 0;  # zero padding on every side
  activation @4 :Activation = identity;
  weightInit @5 :WeightInit = networkDefault;
}

struct Pooling {
  kernel @0 :UInt32 = 2;
  stride @1 :UInt32 = 0;   # 0 means: equal to kernel
  padding @2 :UInt32 = 0;
}

struct LeakyRelu {
  alpha @0 :Float32 = 0.01;
}

struct Dropout {
  rate @0 :Float32 = 0.5;  # probability of dropping an activation during training
}

struct BatchNormalization {
  momentum @0 :Float32 = 0.9;  # running = momentum * running + (1 - momentum) * batch
  epsilon @1 :Float32 = 1e-5;
}

struct Output {
  units @0 :UInt32;        # number of classes
  loss @1 :Loss = softmaxCrossEntropy;
  weightInit @2 :WeightInit = networkDefault;
}

enum Loss {
  softmaxCrossEntropy @0;
}

# -- data ------------------------------------------------------------------------------------

struct DataSpec {
  train @0 :DataSource;
  test @1 :DataSource;
  preprocessing @2 :Preprocessing;
  shuffle @3 :Bool = true;  # reshuffle the training partition every epoch (seeded)
}

struct DataSource {
  union {
    none @0 :Void;
    idx @1 :IdxSource;
    csv @2 :CsvSource;
  }
}

struct IdxSource {
  images @0 :Text;  # IDX file, plain or gzip
  labels @1 :Text;
}

struct CsvSource {
  path @0 :Text;
  labelColumn @1 :UInt32 = 0;
  header @2 :Bool = false;  # skip the first line
  delimiter @3 :Text = ",";
}

struct Preprocessing {
  scale @0 :Float32 = 1.0;  # every feature is multiplied by this first (1/255 for pixels)
  standardize @1 :Standardize = none;
}

enum Standardize {
  none @0;
  global @1;      # subtract the training set's mean, divide by its standard deviation
  perFeature @2;  # the same, feature by feature
}

# -- training --------------------------------------------------------------------------------

struct Training {
  epochs @0 :UInt32 = 1;
  batchSize @1 :UInt32 = 32;  # per worker
  seed @2 :UInt64 = 42;
  updater @3 :Updater;
  l2 @4 :Float32 = 0;         # L2 regularisation coefficient on weights (not biases)
  computeThreads @5 :UInt32 = 1;  # BLAS threads per worker
  device @6 :Device = cpu;        # where each worker's step runs (--device overrides)
}

# The backend a worker's step runs on. cuda needs a build with the CUDA backend and a GPU;
# several workers of one process share the GPU, each on its own stream.
enum Device {
  cpu @0;
  cuda @1;
}

struct Updater {
  learningRate @0 :Float32 = 0.01;
  schedule @1 :Schedule;
  union {
    sgd @2 :Void;
    momentum @3 :Momentum;
    nesterov @4 :Momentum;
    adam @5 :Adam;
    rmsProp @6 :RmsProp;
    adaGrad @7 :AdaGrad;
  }
}

struct Momentum {
  momentum @0 :Float32 = 0.9;
}

struct Adam {
  beta1 @0 :Float32 = 0.9;
  beta2 @1 :Float32 = 0.999;
  epsilon @2 :Float32 = 1e-8;
}

struct RmsProp {
  decay @0 :Float32 = 0.95;  # Deeplearning4j's default
  epsilon @1 :Float32 = 1e-8;
}

struct AdaGrad {
  epsilon @0 :Float32 = 1e-6;
}

struct Schedule {
  unit @0 :ScheduleUnit = iteration;
  union {
    fixed @1 :Void;
    step @2 :StepSchedule;                # rate * decay ^ floor(t / every)
    exponential @3 :ExponentialSchedule;  # rate * gamma ^ t
  }
}

enum ScheduleUnit {
  iteration @0;
  epoch @1;
}

struct StepSchedule {
  decay @0 :Float32 = 0.1;
  every @1 :UInt32 = 1;
}

struct ExponentialSchedule {
  gamma @0 :Float32 = 0.99;
}

# -- distribution (filled in by the actor runtime) --------------------------------------------

struct Distributed {
  workersPerNode @0 :UInt32 = 1;
  sharing @1 :Sharing;
  # Stale-synchronous parallel bound (Ho et al. 2013): a worker computes its (j+1)-th update
  # of an epoch only once the first j - staleness updates of every node's slowest worker
  # have reached it. 0: synchronous. Measured on fashion_mlp without sharing settings, 12 nodes
  # in a mesh, 2 epochs: 83.0-83.2% at 1, 84.5-85.5% at 0 (kvstore dist_sync 84.9%).
  # At most 1,000,000.
  staleness @2 :UInt32 = 0;
  # Who passes frames to whom (actors/sharing/topology.hpp): plain through one hub
  # relay on the scheduler, mesh along a tree of at most `fanout` children a node (DL4J
  # MeshOrganizer), auto plain below 32 nodes and mesh from there.
  topology @3 :Topology = plain;
  fanout @4 :UInt32 = 8;  # children a mesh node passes frames to, 1..1024 (DL4J's default)
  # What the workers exchange: `shared`, threshold-encoded updates every step (Deeplearning4j
  # gradient sharing, above); `averaging`, their parameters every `averagingFrequency` steps,
  # which every worker then replaces by the workers' average (Deeplearning4j parameter
  # averaging, ParallelWrapper's AVERAGING mode); `kvstore`, parameter servers (MXNet's
  # KVStore: workers push gradients to parameter_shards on server nodes and take back the
  # parameters), below; `pipeline`, the network split into contiguous stages, one a worker
  # node (LightDNN's subnets; GPipe's micro-batches), below.
  mode @5 :TrainingMode = shared;
  averagingFrequency @6 :UInt32 = 5;  # steps between averages (Deeplearning4j: 5 to 10)
  averageUpdaters @7 :Bool = true;    # average the updater state too (ParallelWrapper's default)
  # kvstore mode: how shards merge pushes (MXNet's dist_sync, dist_async), how workers encode
  # them, and whether the optimizer runs on the shards (MXNet's update_on_kvstore) or each
  # worker runs it on the merged gradient (dist_sync only).
  kvstore @8 :KvStoreSync = distSync;
  compression @9 :KvCompression = none;
  serverOptimizer @10 :Bool = true;
  # Servers that hold each key range (chain replication: the head answers once every replica
  # committed a step; a lost server's ranges go on on their next replica), 1..16.
  replicas @11 :UInt32 = 1;
  # Keys of at least this many elements are split across every server (MXNet's default).
  bigArrayBound @12 :UInt64 = 1000000;
  # The magnitude of every 2-bit value (MXNet's gradient_compression threshold).
  twoBitThreshold @13 :Float32 = 0.5;
  # pipeline mode: the stages the network is split into (0: one per worker node), the
  # micro-batches a minibatch is split into (0: 4 x stages, GPipe's advice) and the copies of
  # the pipeline (each trains a share of every epoch; the copies of a stage share their
  # updates by threshold encoding, as data-parallel workers do).
  stages @14 :UInt32 = 0;
  microBatches @15 :UInt32 = 0;
  pipelines @16 :UInt32 = 1;
  # What the shards answer pushes with: fp32 values, or fp16 (half the pull bytes; the shard
  # keeps fp32, the workers' replicas hold the values rounded to half precision).
  pullPrecision @17 :PullPrecision = fp32;
  # pipeline mode: every this many steps, at each epoch's end and at the start, each stage
  # copies its parameters and updater state and keeps the copy on a neighbouring stage's node,
  # so a lost stage is re-spawned from it on a spare node (LightDNN's stage restore).
  snapshotEvery @18 :UInt32 = 100;
  # Worker nodes a pipeline job keeps idle to re-spawn a lost stage on (every job node beyond
  # the stages serves as a spare); the stages default to the other nodes, one a stage.
  spares @19 :UInt32 = 0;
  # How a pipeline's layers are split: by the nodes' speeds (LightDNN's speed-aware
  # partitioning), or as if every node were as fast as the others (what GPipe does; for
  # comparing the two, bench/bench_pipeline_speeds.cpp).
  partition @20 :StagePartition = speedAware;
  # How a pipeline's first stage lets a minibatch's micro-batches go: one forward, one
  # backward (PipeDream-Flush's 1F1B: at most 2 a stage in flight, one filling the pipeline
  # and one hiding a message's round trip, so a stage keeps the activations of that many), or
  # GPipe's all at once (all M kept on the first stage; fastest where memory allows).
  schedule @21 :PipelineSchedule = oneForwardOneBackward;
  # A speed-aware pipeline is split again at an epoch's end when its stages' measured times,
  # each over its prediction, differ by more than this share (a node's speed drifted against
  # the others; LightDNN's dynamic partition): the nodes' speeds are corrected by those
  # ratios and the layers placed again. 0: never.
  repartitionMargin @22 :Float32 = 0.25;
}

enum StagePartition {
  speedAware @0;
  speedBlind @1;
}

enum PipelineSchedule {
  oneForwardOneBackward @0;
  gpipe @1;
}

enum PullPrecision {
  fp32 @0;
  fp16 @1;
}

enum KvStoreSync {
  distSync @0;
  distAsync @1;
}

enum KvCompression {
  none @0;
  twoBit @1;
  threshold @2;
}

enum TrainingMode {
  shared @0;
  averaging @1;
  kvstore @2;
  pipeline @3;
}

enum Topology {
  plain @0;
  mesh @1;
  auto @2;
}

# How the updates shared between workers are threshold-encoded. A job that names no threshold
# policy gets `calibrated` (compute/encoders/calibrated_blocks.hpp): a threshold
# per tensor estimated from the update itself, the sent elements' mean magnitude, fp16 for
# small tensors. Naming `adaptive`, `fixed` or `targetSparsity` gives Deeplearning4j's
# EncodingHandler with that ThresholdAlgorithm and its ResidualClippingPostProcessor, with
# DL4J's defaults.
struct Sharing {
  threshold :union {
    adaptive @0 :AdaptiveThreshold;              # keep the fraction sent inside a band
    fixed @1 :FixedThreshold;                    # one threshold throughout
    targetSparsity @2 :TargetSparsityThreshold;  # steer the fraction sent towards one value
    calibrated @8 :CalibratedThreshold;          # per tensor, from the update (the default)
  }
  # The next three apply to the Deeplearning4j policies only (calibrated never clips).
  residualClipFactor @3 :Float32 = 5.0;  # clip the residual to this many thresholds ...
  residualClipEvery @4 :UInt32 = 5;      # ... every this many encodings; 0: never clip
  shakeUpEvery @5 :UInt32 = 0;           # every k-th encoding at a third of the threshold; 0: never
  # The next two apply where the updates are summed (see combine). Where they are averaged a
  # worker treats its own update as any other (applied as its frame arrives, momentum kept),
  # so that every replica takes the same step, synchronous data parallelism's: measured with
  # bench_sharing on fashion_nesterov, 4 workers, 5 seeds, -1.24 points against dist_sync
  # with both on, +0.02 with both off.
  # Momentum factor masking (Lin et al. 2018, Deep Gradient Compression): clear the updater's
  # momentum (Adam's first moment, the velocity) of every element a worker has just sent.
  # Not in DL4J; measured on examples/fashion_mlp.job, 2 workers: final training loss
  # 0.206-0.209 instead of 0.220-0.223, test accuracy +0.45 points.
  momentumMasking @6 :Bool = true;
  # A worker applies its own update to its replica in full at once and skips its own frames;
  # the others apply what it sent. Its replica then holds its unsent residual as well (within
  # the clip bound: clipping takes the excess out of both), so its next gradient sees all of
  # its own progress. Not in DL4J, where a worker's own update reaches its replica only as
  # its encoded frame. Measured on examples/fashion_mlp.job, 10 epochs, seeds 42, 1, 2, 3:
  # 4 nodes 89.11-89.51% instead of 88.70-89.04%; 2 workers 89.59-89.73% instead of
  # 89.29-89.61%. Calibrated, fashion_mlp.job without its distributed section (Adam, summed),
  # 2 nodes, seeds 42 and 1: 89.57/89.61% instead of 89.21/89.19%.
  applyOwnUpdate @7 :Bool = true;
  # Whether a replica moves by the sum of the workers' updates (Deeplearning4j) or by their
  # mean (synchronous data parallelism's step: each update divided by the round's workers).
  # `auto`: the mean for updaters linear in the gradient (sgd, momentum, nesterov), where it
  # is the synchronous step (exactly so where every tensor goes dense) and the sum multiplies
  # the learning rate by the workers; the sum for adam, rmsProp and adaGrad, whose per-worker
  # steps are normalised and whose mean shrinks with the workers' noise; the sum too where a
  # Deeplearning4j policy is named. Measured against kvstore dist_sync, 4 workers, 2-3 seeds
  # (bench/sharing_jobs and variants): momentum at lr 0.05 on a 16-256-128-6 net mean +0.4
  # points, sum -3.3; on the rings job mean +3.0, sum -2.3; Nesterov on Fashion-MNIST mean
  # -1.1 (+0.2 once averaged jobs no longer applied own updates at once), sum +0.5; Adam on
  # the spiral at 1e-2 mean -1.5, sum +1.0.
  combine @9 :UpdateCombination = auto;
}

enum UpdateCombination {
  auto @0;
  sum @1;
  mean @2;
}

struct AdaptiveThreshold {
  initial @0 :Float32 = 1e-4;        # threshold of the first encoding
  minSparsity @1 :Float64 = 1e-4;    # fraction sent below which the threshold shrinks
  maxSparsity @2 :Float64 = 1e-2;    # fraction sent above which the threshold grows
  decay @3 :Float64 = 0.9659363289248456;  # factor per step, 0.5^(1/20): x2 in 20 steps
}

struct CalibratedThreshold {
  density @0 :Float64 = 0.01;      # share of a large tensor's elements sent a step, (0, 1/16]
  denseElements @1 :UInt64 = 16384;  # tensors of at most this many elements go dense (fp16)
}

struct FixedThreshold {
  threshold @0 :Float32 = 1e-3;
}

struct TargetSparsityThreshold {
  initial @0 :Float32 = 1e-4;
  sparsity @1 :Float64 = 1e-3;       # fraction of the elements to send
  decay @2 :Float64 = 0.9659363289248456;
}
