#include "strom/runtime/node/training_setup.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "strom/compute/cpu/blas.hpp"
#include "strom/compute/evaluation.hpp"
#include "strom/log.hpp"
#include "strom/runtime/job/checkpoint.hpp"

namespace strom::runtime {

double seconds_since(training_clock::time_point start) {
  return std::chrono::duration<double>(training_clock::now() - start).count();
}

result<void> prepare_run(job_spec& job, const local_training_options& options) {
  auto training = job.builder().getTraining();
  if (options.epochs)
    training.setEpochs(*options.epochs);
  if (options.seed)
    training.setSeed(*options.seed);
  if (options.batch_size)
    training.setBatchSize(*options.batch_size);
  if (options.learning_rate)
    training.getUpdater().setLearningRate(*options.learning_rate);
  if (options.device)
    training.setDevice(*options.device);
  auto distributed = job.builder().getDistributed();
  if (options.topology)
    distributed.setTopology(to_schema(*options.topology));
  if (options.fanout)
    distributed.setFanout(*options.fanout);
  if (options.mode)
    distributed.setMode(*options.mode);
  if (options.averaging_frequency)
    distributed.setAveragingFrequency(*options.averaging_frequency);
  if (options.kvstore)
    distributed.setKvstore(*options.kvstore);
  if (options.compression)
    distributed.setCompression(*options.compression);
  if (options.replicas)
    distributed.setReplicas(*options.replicas);
  if (options.pull_precision)
    distributed.setPullPrecision(*options.pull_precision);
  if (options.stages)
    distributed.setStages(*options.stages);
  if (options.micro_batches)
    distributed.setMicroBatches(*options.micro_batches);
  if (options.pipelines)
    distributed.setPipelines(*options.pipelines);
  if (options.snapshot_every)
    distributed.setSnapshotEvery(*options.snapshot_every);
  if (options.spares)
    distributed.setSpares(*options.spares);
  if (options.schedule)
    distributed.setSchedule(*options.schedule);
  if (options.repartition_margin)
    distributed.setRepartitionMargin(*options.repartition_margin);
  // Every path to training passes here (after the overrides): a job built in a host
  // program, or received by a node, is checked as thoroughly as a loaded job file.
  if (auto ok = check_job(job); !ok)
    return ok;
  compute::set_compute_threads(static_cast<int>(training.getComputeThreads()));
  return success();
}

result<compute::training_data> load_job_data(const job_spec& job) {
  log::debug("{}: loading data", job.source());
  auto data = compute::load_data(job.reader().getData(), ".");
  if (!data)
    return error{fmt::format("{}: {}", job.source(), data.err().message)};
  return data;
}

result<void> check_training_data(const job_spec& job, const compute::training_data& data,
                                 std::size_t input_floats, std::size_t classes) {
  const auto& train = data.train;
  if (train.size() == 0)
    return error{fmt::format("{}: data.train: the training set is empty", job.source())};
  if (train.sample_shape.size() != input_floats)
    return error{fmt::format("{}: network.input: {} floats per sample, but the training data has {}",
                             job.source(), input_floats, train.sample_shape.size())};
  if (train.classes > classes)
    return error{fmt::format("{}: the data has labels up to {}, but the output layer has {} units",
                             job.source(), train.classes - 1, classes)};
  return success();
}

result<compute::training_data> load_training_data(const job_spec& job, std::size_t input_floats,
                                                  std::size_t classes) {
  auto data = load_job_data(job);
  if (!data)
    return data;
  if (auto fits = check_training_data(job, *data, input_floats, classes); !fits)
    return fits.err();
  return data;
}

result<actors::epoch_check> check_epoch(compute::replica& trained, const compute::dataset& test,
                                        const job_spec& job, const checkpoint_plan& checkpoints,
                                        std::uint32_t epoch, std::uint64_t train_samples) {
  actors::epoch_check check;
  if (test.size() > 0) {
    auto quality = compute::evaluate(trained.net(), test);
    check.tested = {quality.accuracy, quality.loss};
  }
  if (checkpoints.folder.empty())
    return check;
  checkpoint_progress progress{epoch + 1,
                               trained.iteration(),
                               train_samples,
                               static_cast<float>(check.tested.accuracy),
                               static_cast<float>(check.tested.loss),
                               checkpoints.workers,
                               checkpoints.nodes,
                               checkpoints.servers};
  auto saved = save_run_checkpoint(checkpoints, job, trained, progress);
  if (!saved)
    return saved.err();
  check.checkpoint = std::move(*saved);
  return check;
}

} // namespace strom::runtime
