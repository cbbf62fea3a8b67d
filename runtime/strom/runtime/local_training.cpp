#include "strom/runtime/local_training.hpp"

#include <fmt/format.h>

#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/data/partition.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/log.hpp"
#include "strom/runtime/machine_memory.hpp"
#include "strom/runtime/stop_signals.hpp"
#include "strom/runtime/training_setup.hpp"

namespace strom::runtime {

result<training_report> train_locally(job_spec& job, const local_training_options& options) {
  const auto run_start = training_clock::now();
  if (auto ok = prepare_run(job, options); !ok)
    return ok.err();
  if (auto ok = check_job_memory(job, 1, false); !ok)
    return ok.err();
  auto spec = job.reader();
  const auto epochs = spec.getTraining().getEpochs();
  const auto batch_size = spec.getTraining().getBatchSize();

  auto built = compute::make_replica(spec, 0);
  if (!built)
    return error{fmt::format("{}: {}", job.source(), built.err().message)};
  auto& trainer = **built;
  auto& net = trainer.net();

  auto data = load_training_data(job, net);
  if (!data)
    return data.err();
  auto& train_set = data->train;
  log::info("{}: {} training and {} test samples, {} parameters", job.source(), train_set.size(),
            data->test.size(), net.parameters().size());

  training_report report;
  report.job = spec.getName().cStr();
  report.epochs = epochs;
  const auto everything = compute::partition(train_set.size(), 0, 1);
  const std::size_t batches_per_epoch = (train_set.size() + batch_size - 1) / batch_size;
  const std::uint64_t seed = spec.getTraining().getSeed();
  const bool shuffle = spec.getData().getShuffle();
  const std::string checkpoint = checkpoint_path(options.checkpoint_dir, report.job);
  training_observer silent;
  training_observer& observer = options.observer ? *options.observer : silent;

  for (std::uint32_t epoch = 0; epoch < epochs; ++epoch) {
    compute::batch_loader loader{train_set, compute::epoch_order(everything, seed, epoch, shuffle),
                                 batch_size};
    const auto epoch_start = training_clock::now();
    double loss_sum = 0.0;
    std::size_t samples = 0;
    std::size_t batches = 0;
    while (const auto* batch = loader.next()) {
      if (stop_requested())
        return error{fmt::format("{}: interrupted in epoch {}", job.source(), epoch + 1)};
      loss_sum += trainer.train_step(batch->features, batch->labels, batch->size);
      samples += batch->size;
      ++batches;
      const double elapsed = seconds_since(epoch_start);
      const double rate = samples / std::max(elapsed, 1e-9);
      const double remaining_samples =
        static_cast<double>(train_set.size()) * (epochs - epoch) - static_cast<double>(samples);
      observer.on_step({epoch + 1, epochs, batches, batches_per_epoch, loss_sum / batches, rate,
                        remaining_samples / std::max(rate, 1e-9)});
    }
    trainer.finish_epoch();
    const epoch_totals totals{loss_sum, batches, samples, seconds_since(epoch_start)};
    if (auto ok = end_epoch(report, epoch, totals, trainer, data->test, observer, job, checkpoint);
        !ok)
      return ok.err();
  }
  report.iterations = trainer.iteration();
  end_run(report, run_start, checkpoint);
  return report;
}

} // namespace strom::runtime
