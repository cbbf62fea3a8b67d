#pragma once
// A training observer that acts once at a known point of a running job (a node lost or added
// mid-epoch), for tests of elastic runs.

#include <cstdint>
#include <functional>
#include <utility>

#include "strom/runtime/job/training_progress.hpp"

namespace strom::testing {

/// Calls `act` once, at the first progress of epoch `epoch` (1-based) past `fraction` of its
/// batches or of a later epoch, else at its end: a loss or a join at a known point of a
/// running job.
class act_mid_epoch : public runtime::training_observer {
public:
  act_mid_epoch(std::uint32_t epoch, double fraction, std::function<void()> act)
      : epoch_(epoch), fraction_(fraction), act_(std::move(act)) {}

  void on_step(const actors::step_progress& p) override {
    // Progress comes every quarter second or so: a later epoch acts at its first.
    if (done_ || p.epoch < epoch_
        || (p.epoch == epoch_ && p.batch < fraction_ * static_cast<double>(p.batches)))
      return;
    done_ = true;
    act_();
  }

  // Progress is sent at most every quarter second: a short epoch may send none.
  void on_epoch(const actors::epoch_summary& e) override {
    if (done_ || e.epoch < epoch_)
      return;
    done_ = true;
    act_();
  }

  bool done() const { return done_; }

private:
  std::uint32_t epoch_;
  double fraction_;
  std::function<void()> act_;
  bool done_ = false;
};

} // namespace strom::testing
