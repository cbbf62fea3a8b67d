#include "strom/runtime/cluster/job_follower.hpp"

#include <fmt/format.h>

namespace strom::runtime {

job_follower::job_follower(std::uint64_t job_id, training_observer* observer)
  : job_id_(job_id), observer_(observer) {}

void job_follower::on(const actors::job_progress& progress) {
  if (progress.job_id != job_id_ || !observer_)
    return;
  observer_->on_step(progress.progress);
  observer_->on_cluster(progress.cluster);
}

void job_follower::on(const actors::job_epoch& epoch) {
  if (epoch.job_id == job_id_ && observer_)
    observer_->on_epoch(epoch.summary);
}

bool job_follower::on(const actors::job_finished& done) {
  if (done.job_id != job_id_)
    return false;
  if (done.succeeded)
    outcome_ = done.report;
  else if (done.cancelled)
    outcome_ = error{fmt::format("job {} was cancelled: {}", job_id_, done.failure)};
  else
    outcome_ = error{fmt::format("job {} failed: {}", job_id_, done.failure)};
  return true;
}

} // namespace strom::runtime
