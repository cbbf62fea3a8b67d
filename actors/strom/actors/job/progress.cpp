#include "strom/actors/job/progress.hpp"

#include <algorithm>

namespace strom::actors {

epoch_summary record_epoch(training_report& report, std::uint32_t epoch,
                           const epoch_totals& totals, const test_result& tested) {
  report.train_seconds += totals.seconds;
  report.train_samples += totals.samples;
  report.final_loss = totals.batches ? totals.loss_sum / totals.batches : 0.0;
  if (tested.accuracy >= 0) {
    report.test_accuracy = tested.accuracy;
    report.test_loss = tested.loss;
  }
  return {epoch + 1,        report.epochs,   report.final_loss,
          tested.loss,      tested.accuracy, totals.seconds,
          totals.samples / std::max(totals.seconds, 1e-9)};
}

void record_run(training_report& report, double wall_seconds) {
  report.train_samples_per_second = report.train_samples / std::max(report.train_seconds, 1e-9);
  report.wall_seconds = wall_seconds;
}

} // namespace strom::actors
