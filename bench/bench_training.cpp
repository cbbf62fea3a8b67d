// Training throughput of one worker on one compute thread: samples per second of full
// training steps (forward, backward, updater, apply) on real Fashion-MNIST batches.
// Prints one JSON object per job. Usage: bench_training [--batches N] [JOB...]
// (default: examples/fashion_mlp.job and examples/fashion_cnn.job).

#include <fmt/format.h>

#include "json_line.hpp"

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "strom/compute/cpu/blas.hpp"
#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/data/dataset_from_spec.hpp"
#include "strom/compute/data/partition.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"

using strom::bench::print_json;
using strom::bench::rounded;

namespace {

/// Steps before timing starts: first-touch page faults and OpenBLAS buffer set-up.
constexpr std::size_t warmup_batches = 20;

int bench_job(const std::string& path, std::size_t batches) {
  using namespace strom;
  auto job = runtime::load_job_file(path);
  if (!job) {
    fmt::print(stderr, "{}\n", job.err().message);
    return 1;
  }
  auto spec = job->reader();
  auto built = compute::make_replica(spec, 0);
  auto data = compute::load_data(spec.getData(), ".");
  if (!built || !data) {
    fmt::print(stderr, "{}: {}\n", path, !built ? built.err().message : data.err().message);
    return 1;
  }
  const std::size_t batch_size = spec.getTraining().getBatchSize();
  auto order = compute::epoch_order(compute::partition(data->train.size(), 0, 1),
                                    spec.getTraining().getSeed(), 0, true);
  compute::batch_loader loader{data->train, std::move(order), batch_size};
  auto& trainer = **built;
  using clock = std::chrono::steady_clock;
  clock::time_point start;
  std::size_t samples = 0;
  std::size_t timed = 0;
  for (std::size_t i = 0; i < warmup_batches + batches; ++i) {
    const auto* batch = loader.next();
    if (!batch)
      break;
    if (i == warmup_batches)
      start = clock::now();
    trainer.train_step(batch->features, batch->labels, batch->size);
    if (i >= warmup_batches) {
      samples += batch->size;
      ++timed;
    }
  }
  const double seconds = std::chrono::duration<double>(clock::now() - start).count();
  print_json({{"bench", "training"}, {"impl", "strom"}, {"job", spec.getName().cStr()},
              {"workers", 1}, {"threads", compute::compute_threads()}, {"batch", batch_size},
              {"batches", timed}, {"seconds", rounded(seconds, 4)},
              {"samples_per_second", rounded(samples / seconds, 1)}});
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::size_t batches = 300;
  std::vector<std::string> jobs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--batches") == 0 && i + 1 < argc)
      batches = std::stoul(argv[++i]);
    else
      jobs.emplace_back(argv[i]);
  }
  if (jobs.empty())
    jobs = {STROM_SOURCE_DIR "/examples/fashion_mlp.job", STROM_SOURCE_DIR "/examples/fashion_cnn.job"};
  strom::compute::set_compute_threads(1);
  int status = 0;
  for (const auto& job : jobs)
    status |= bench_job(job, batches);
  return status;
}
