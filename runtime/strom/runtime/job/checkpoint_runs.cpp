#include "strom/runtime/job/checkpoint_runs.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

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
  std::vector<std::pair<std::uint32_t, fs::path>> epochs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_folder, ec))
    if (const auto n = numbered(entry.path().filename().string(), epoch_prefix, checkpoint_suffix))
      epochs.emplace_back(*n, entry.path());
  if (ec)
    return error{fmt::format("{}: cannot list the checkpoints: {}", run_folder, ec.message())};
  if (epochs.size() <= keep)
    return success();
  std::sort(epochs.begin(), epochs.end());
  for (std::size_t i = 0; i + keep < epochs.size(); ++i)
    if (!fs::remove(epochs[i].second, ec) && ec)
      return error{fmt::format("{}: cannot remove an old checkpoint: {}",
                               epochs[i].second.string(), ec.message())};
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

result<std::string> save_run_checkpoint(const checkpoint_plan& plan, const job_spec& job,
                                        const compute::replica& trained,
                                        const checkpoint_progress& progress) {
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
