#pragma once
// A scheduler's state directory (strom node --scheduler --state-dir DIR): its record in
// DIR/scheduler.state and each running job's checkpoint in DIR/job-N.checkpoint. Both are
// sealed: a magic, a format version, the payload's length and its CRC-32 precede it, so a
// truncated, damaged or foreign file is refused with the file and the fault named, never
// half-read. Files are replaced atomically (atomic_file.hpp).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "strom/actors/cluster/scheduler_store.hpp"
#include "strom/compute/result.hpp"

namespace strom::runtime {

/// The scheduler_store of one directory.
class state_dir_store final : public actors::scheduler_store {
public:
  /// Opens (creating it if needed) the directory `dir`; errors when it cannot be made or is
  /// not a directory.
  static result<std::shared_ptr<state_dir_store>> open(const std::string& dir);

  /// The record kept in the directory; nothing when there is none yet (a first start).
  result<std::optional<actors::scheduler_record>> load() const;

  result<void> save(const actors::scheduler_record& record) override;
  result<void> save_checkpoint(std::uint64_t job_id, const compute::frame& encoded) override;
  result<compute::frame> load_checkpoint(std::uint64_t job_id) override;
  void drop_checkpoint(std::uint64_t job_id) override;

  const std::filesystem::path& dir() const noexcept { return dir_; }

private:
  explicit state_dir_store(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path checkpoint_path(std::uint64_t job_id) const;

  std::filesystem::path dir_;
};

} // namespace strom::runtime
