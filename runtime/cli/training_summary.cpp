#include "training_summary.hpp"

#include <fmt/format.h>

#include "commands.hpp"
#include "strom/runtime/report/report_files.hpp"

namespace strom::cli {

int finish_training(std::string_view command, const result<runtime::training_report>& report,
                    const training_outputs& outputs) {
  if (!report) {
    fmt::print(stderr, "{}: {}\n", command, report.err().message);
    return failure_status();
  }
  if (outputs.metrics_out) {
    if (auto ok = runtime::write_metrics(*outputs.metrics_out, *report, outputs.history); !ok) {
      fmt::print(stderr, "{}: {}\n", command, ok.err().message);
      return exit_failure;
    }
  }
  if (outputs.html_out) {
    // The page reads the same JSON a metrics file holds, so `strom report` on that file
    // draws the same page.
    if (auto ok = runtime::write_report_page(*outputs.html_out,
                                             runtime::to_json(*report, outputs.history),
                                             "the run's metrics", std::nullopt);
        !ok) {
      fmt::print(stderr, "{}: --html-out: {}\n", command, ok.err().message);
      return exit_failure;
    }
  }
  const auto& r = *report;
  const auto quality = r.test_accuracy < 0
                         ? std::string{"no test set"}
                         : fmt::format("test accuracy {:.2f}%, test loss {:.4f}",
                                       100.0 * r.test_accuracy, r.test_loss);
  fmt::print("{}: {} epoch{} in {:.1f} s ({:.0f} training samples/s on {} worker{}{})\n"
             "  {}, final training loss {:.4f}\n  checkpoint: {}\n",
             r.job, r.epochs, r.epochs == 1 ? "" : "s", r.wall_seconds,
             r.train_samples_per_second, r.workers, r.workers == 1 ? "" : "s",
             r.nodes > 1 ? fmt::format(" in {} nodes", r.nodes) : std::string{}, quality,
             r.final_loss, r.checkpoint.empty() ? std::string{"none"} : r.checkpoint);
  return exit_ok;
}

} // namespace strom::cli
