#include "training_summary.hpp"

#include <fmt/format.h>

#include "commands.hpp"
#include "strom/compute/memory_estimate.hpp"
#include "strom/runtime/report/report_files.hpp"

namespace strom::cli {

namespace {

/// What the run's nodes sent one another, in its mode's terms; empty when nothing was sent
/// (one worker alone).
std::string traffic_line(const runtime::training_report& r) {
  using compute::bytes_text;
  const auto share = [](std::uint64_t part, std::uint64_t whole) {
    return whole > 0 ? fmt::format(" ({:.2f}% of dense fp32)",
                                   100.0 * static_cast<double>(part) / static_cast<double>(whole))
                     : std::string{};
  };
  if (r.mode == "kvstore")
    return fmt::format("pushed {}{}, pulled {}", bytes_text(r.push_bytes),
                       share(r.push_bytes, r.push_dense_bytes), bytes_text(r.pull_bytes));
  if (r.mode == "averaging")
    return r.averaging_bytes > 0 ? fmt::format("averaging sent {}", bytes_text(r.averaging_bytes))
                                 : std::string{};
  if (r.mode == "pipeline")
    return fmt::format("activations and their gradients sent {}",
                       bytes_text(r.pipeline.activation_bytes));
  return r.bytes_sent > 0 ? fmt::format("updates sent {}{}", bytes_text(r.bytes_sent),
                                        share(r.bytes_sent, r.dense_bytes_equivalent))
                          : std::string{};
}

/// The name of the job's updater, as the job file spells it.
const char* updater_name(schema::Updater::Reader updater) {
  switch (updater.which()) {
    case schema::Updater::SGD: return "sgd";
    case schema::Updater::MOMENTUM: return "momentum";
    case schema::Updater::NESTEROV: return "nesterov";
    case schema::Updater::ADAM: return "adam";
    case schema::Updater::RMS_PROP: return "rmsProp";
    case schema::Updater::ADA_GRAD: return "adaGrad";
  }
  return "unknown";
}

} // namespace

std::vector<runtime::run_setting> run_settings(std::string_view command, int argc, char** argv,
                                               const runtime::job_spec& job,
                                               const runtime::local_training_options& overrides) {
  std::string line{command};
  for (int i = 0; i < argc; ++i) {
    const std::string_view word{argv[i]};
    line += word.find(' ') == std::string_view::npos ? fmt::format(" {}", word)
                                                     : fmt::format(" '{}'", word);
  }
  const auto training = job.reader().getTraining();
  const auto updater = training.getUpdater();
  return {{"command", line},
          {"updater", updater_name(updater)},
          {"learning rate",
           fmt::format("{:g}", overrides.learning_rate.value_or(updater.getLearningRate()))},
          {"batch size", std::to_string(overrides.batch_size.value_or(training.getBatchSize()))},
          {"seed", std::to_string(overrides.seed.value_or(training.getSeed()))}};
}

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
  if (const auto traffic = traffic_line(r); !traffic.empty())
    fmt::print("  {}\n", traffic);
  if (outputs.metrics_out)
    fmt::print("  metrics: {}\n", *outputs.metrics_out);
  if (outputs.html_out)
    fmt::print("  report: {}\n", *outputs.html_out);
  return exit_ok;
}

} // namespace strom::cli
