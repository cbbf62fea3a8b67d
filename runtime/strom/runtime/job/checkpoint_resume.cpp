#include "strom/runtime/job/checkpoint_resume.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "strom/compute/replica_from_spec.hpp"
#include "strom/compute/snapshots/replica_snapshot.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "strom/runtime/job/checkpoint_runs.hpp"

namespace strom::runtime {

result<resume_point> find_resume_point(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return error{fmt::format("--resume {}: no such file or folder", path)};
  std::string file = path;
  if (std::filesystem::is_directory(path, ec)) {
    auto latest = latest_checkpoint(path);
    if (!latest)
      return error{fmt::format("--resume {}", latest.err().message)};
    file = std::move(*latest);
  }
  auto saved = load_checkpoint(file);
  if (!saved)
    return saved.err();
  return resume_point{file, std::move(*saved)};
}

std::string resumed_checkpoint_dir(const std::string& checkpoint_path,
                                   const std::string& fallback) {
  auto dir = checkpoint_dir_of(checkpoint_path);
  return dir.empty() ? fallback : dir;
}

result<actors::job_resume> job_resume_of(const job_spec& job, const checkpoint_contents& saved) {
  const auto& source = saved.job.source();
  const auto training = job.reader().getTraining();
  const auto epochs = training.getEpochs();
  if (saved.progress.epoch >= epochs)
    return error{fmt::format("{}: the checkpoint holds {} epochs, and the job trains {}: give "
                             "--epochs with more to train longer",
                             source, saved.progress.epoch, epochs)};
  // The nodes would refuse a checkpoint that does not fit; say so before they start, then
  // send the model as the replica that took it holds it.
  auto model = compute::make_replica(job.reader(), 0);
  if (!model)
    return error{fmt::format("{}: {}", source, model.err().message)};
  if (auto fits = restore_checkpoint(saved, **model); !fits)
    return error{fmt::format("{}: {}", source, fits.err().message)};
  const auto words = compute::encode_snapshot(compute::take_snapshot(
    **model, nullptr, {saved.progress.epoch, saved.progress.iteration}));
  auto frame = compute::frame::from_bytes(
    {reinterpret_cast<const std::byte*>(words.asBytes().begin()), words.asBytes().size()});
  if (!frame)
    return error{fmt::format("{}: {}", source, frame.err().message)};

  actors::job_resume resume;
  resume.epochs_done = saved.progress.epoch;
  resume.snapshot = std::move(*frame);
  // The run's throughput counts its own samples and seconds: the checkpoint holds no seconds.
  auto& report = resume.report;
  report.job = job.reader().getName().cStr();
  report.iterations = saved.progress.iteration;
  report.test_accuracy = saved.progress.test_accuracy;
  report.test_loss = saved.progress.test_loss;
  return resume;
}

} // namespace strom::runtime
