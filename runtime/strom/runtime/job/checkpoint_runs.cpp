#include "strom/runtime/job/checkpoint_runs.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace strom::runtime {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view run_prefix = "run-";
constexpr std::string_view epoch_prefix = "epoch-";
constexpr std::string_view checkpoint_suffix = ".ckpt";

/// The number N of a name PREFIX + N + SUFFIX; nothing for any other name.
std::optional<std::uint32_t> numbered(std::string_view name, std::string_view prefix,
                                      std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix)
      || !name.ends_with(suffix))
    return std::nullopt;
  const auto digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  std::uint32_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc{} || end != digits.data() + digits.size())
    return std::nullopt;
  return n;
}

/// The entries of `folder` named PREFIX + N + SUFFIX, by N, newest first.
result<std::vector<std::pair<std::uint32_t, fs::path>>> numbered_entries(
  const fs::path& folder, std::string_view prefix, std::string_view suffix) {
  std::vector<std::pair<std::uint32_t, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (const auto n = numbered(entry.path().filename().string(), prefix, suffix))
      found.emplace_back(*n, entry.path());
  if (ec)
    return error{fmt::format("{}: cannot list it: {}", folder.string(), ec.message())};
  std::sort(found.rbegin(), found.rend());
  return found;
}

/// The newest epoch checkpoint of the newest run in the JOBNAME folder `job_folder`.
result<std::optional<fs::path>> latest_of_job(const fs::path& job_folder) {
  auto runs = numbered_entries(job_folder, run_prefix, "");
  if (!runs)
    return runs.err();
  for (const auto& [n, run] : *runs) {
    auto epochs = numbered_entries(run, epoch_prefix, checkpoint_suffix);
    if (!epochs)
      return epochs.err();
    if (!epochs->empty())
      return std::optional{epochs->front().second};
  }
  return std::optional<fs::path>{};
}

/// The test accuracy best.ckpt holds; nothing when there is none or it cannot be read (a
/// damaged best is replaced).
std::optional<float> best_accuracy(const std::string& run_folder) {
  const auto path = best_checkpoint_path(run_folder);
  std::error_code ec;
  if (!fs::exists(path, ec))
    return std::nullopt;
  auto saved = load_checkpoint(path);
  if (!saved)
    return std::nullopt;
  return saved->progress.test_accuracy;
}

/// Removes the epoch checkpoints of `run_folder` older than the newest `keep`.
result<void> remove_older(const std::string& run_folder, std::uint32_t keep) {
  auto epochs = numbered_entries(run_folder, epoch_prefix, checkpoint_suffix);
  if (!epochs)
    return epochs.err();
  std::error_code ec;
  for (std::size_t i = keep; i < epochs->size(); ++i)
    if (!fs::remove((*epochs)[i].second, ec) && ec)
      return error{fmt::format("{}: cannot remove an old checkpoint: {}",
                               (*epochs)[i].second.string(), ec.message())};
  return success();
}

} // namespace

result<std::string> new_run_folder(const std::string& checkpoint_dir,
                                   const std::string& job_name) {
  const auto job_folder = fs::path{checkpoint_dir} / job_name;
  std::error_code ec;
  fs::create_directories(job_folder, ec);
  if (ec)
    return error{fmt::format("--checkpoint-dir {}: cannot create {}: {}", checkpoint_dir,
                             job_folder.string(), ec.message())};
  std::uint32_t last = 0;
  for (const auto& entry : fs::directory_iterator(job_folder, ec))
    if (const auto n = numbered(entry.path().filename().string(), run_prefix, ""))
      last = std::max(last, *n);
  if (ec)
    return error{fmt::format("--checkpoint-dir {}: cannot list {}: {}", checkpoint_dir,
                             job_folder.string(), ec.message())};
  // create_directory is false for a folder that exists: another run took the number meanwhile.
  for (auto n = last + 1;; ++n) {
    const auto folder = job_folder / fmt::format("{}{}", run_prefix, n);
    if (fs::create_directory(folder, ec))
      return folder.string();
    if (ec)
      return error{fmt::format("--checkpoint-dir {}: cannot create {}: {}", checkpoint_dir,
                               folder.string(), ec.message())};
  }
}

std::string epoch_checkpoint_path(const std::string& run_folder, std::uint32_t epochs) {
  return (fs::path{run_folder} / fmt::format("{}{:04}{}", epoch_prefix, epochs, checkpoint_suffix))
    .string();
}

std::string best_checkpoint_path(const std::string& run_folder) {
  return (fs::path{run_folder} / fmt::format("best{}", checkpoint_suffix)).string();
}

result<std::string> latest_checkpoint(const std::string& folder) {
  const fs::path at{folder};
  auto epochs = numbered_entries(at, epoch_prefix, checkpoint_suffix);
  if (!epochs)
    return epochs.err();
  if (!epochs->empty())  // a run folder
    return epochs->front().second.string();
  auto here = latest_of_job(at);  // a JOBNAME folder
  if (!here)
    return here.err();
  if (*here)
    return (*here)->string();
  // A --checkpoint-dir: the one job folder in it that holds a run's checkpoint.
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(at, ec)) {
    if (!entry.is_directory(ec))
      continue;
    auto latest = latest_of_job(entry.path());
    if (!latest)
      return latest.err();
    if (*latest)
      found.push_back(**latest);
  }
  if (ec)
    return error{fmt::format("{}: cannot list it: {}", folder, ec.message())};
  if (found.size() == 1)
    return found.front().string();
  if (found.empty())
    return error{fmt::format("{}: no checkpoint here (no {}N{} in it, in a {}N folder, or in a "
                             "JOBNAME/{}N folder)",
                             folder, epoch_prefix, checkpoint_suffix, run_prefix, run_prefix)};
  std::vector<std::string> jobs;
  for (const auto& path : found)
    jobs.push_back(path.parent_path().parent_path().string());
  std::sort(jobs.begin(), jobs.end());
  return error{fmt::format("{}: holds the checkpoints of {} jobs; name one job's folder: {}",
                           folder, jobs.size(), fmt::join(jobs, ", "))};
}

std::string checkpoint_dir_of(const std::string& checkpoint_path) {
  const auto run = fs::path{checkpoint_path}.parent_path();
  if (!numbered(run.filename().string(), run_prefix, ""))
    return {};
  return run.parent_path().parent_path().string();
}

result<std::string> save_run_checkpoint(const checkpoint_plan& plan, const job_spec& job,
                                        const compute::replica& trained,
                                        const checkpoint_progress& progress) {
  // The submitting machine made the run folder; a node on another machine that does not share
  // it makes it here, as mpirun's ranks find their working folder by its path.
  std::error_code failed;
  fs::create_directories(plan.folder, failed);
  if (failed)
    return error{fmt::format("checkpoint folder {}: {}", plan.folder, failed.message())};
  const auto path = epoch_checkpoint_path(plan.folder, progress.epoch);
  if (auto saved = save_checkpoint(path, job, trained, progress); !saved)
    return saved.err();
  // Without a test set (accuracy -1) there is no best to keep.
  if (progress.test_accuracy >= 0.0f) {
    const auto best = best_accuracy(plan.folder);
    if (!best || progress.test_accuracy > *best)
      if (auto saved = save_checkpoint(best_checkpoint_path(plan.folder), job, trained, progress);
          !saved)
        return saved.err();
  }
  if (plan.keep > 0)
    if (auto removed = remove_older(plan.folder, plan.keep); !removed)
      return removed.err();
  return path;
}

} // namespace strom::runtime
