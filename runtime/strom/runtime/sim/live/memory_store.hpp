#pragma once
// Live mode's scheduler_store: the record and checkpoints a restarted scheduler takes up, kept
// in memory instead of a state directory (actors/cluster/scheduler_store.hpp).

#include <cstdint>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "strom/actors/cluster/scheduler_store.hpp"

namespace strom::runtime::sim {

/// The scheduler's state across its restart, kept in memory (a scheduler_store is an
/// interface for this: the same state could go to a standby scheduler instead of a disk).
class memory_store final : public actors::scheduler_store {
public:
  result<void> save(const actors::scheduler_record& record) override {
    record_ = record;
    return success();
  }
  result<void> save_checkpoint(std::uint64_t job_id, const compute::frame& encoded) override {
    checkpoints_[job_id] = encoded;
    return success();
  }
  result<compute::frame> load_checkpoint(std::uint64_t job_id) override {
    auto found = checkpoints_.find(job_id);
    if (found == checkpoints_.end())
      return error{fmt::format("no checkpoint of job {} was kept", job_id)};
    return found->second;
  }
  void drop_checkpoint(std::uint64_t job_id) override { checkpoints_.erase(job_id); }
  const std::optional<actors::scheduler_record>& record() const { return record_; }

private:
  std::optional<actors::scheduler_record> record_;
  std::map<std::uint64_t, compute::frame> checkpoints_;
};

} // namespace strom::runtime::sim
