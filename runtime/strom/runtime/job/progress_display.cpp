#include "strom/runtime/job/progress_display.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "strom/log.hpp"

namespace strom::runtime {

namespace {

/// A bar redraw a tenth of a second is smooth without costing the training loop anything.
constexpr auto bar_interval = std::chrono::milliseconds{100};
/// Without a terminal, one line every ten seconds keeps logs short but alive.
constexpr auto log_interval = std::chrono::seconds{10};
constexpr int bar_width = 30;

std::string format_duration(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  if (s >= 3600)
    return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

} // namespace

progress_display::progress_display(std::FILE* out)
  : out_(out), terminal_(isatty(fileno(out)) != 0), last_print_(clock::now()) {}

progress_display::~progress_display() { end_line(); }

void progress_display::end_line() {
  if (!bar_drawn_)
    return;
  fmt::print(out_, "\n");
  std::fflush(out_);
  bar_drawn_ = false;
}

void progress_display::on_step(const step_progress& p) {
  const auto now = clock::now();
  if (p.epoch != epoch_) {
    epoch_ = p.epoch;
    epoch_start_ = now;
  }
  const bool last = p.batch == p.batches;
  if (now - last_print_ < (terminal_ ? bar_interval : log_interval) && !(terminal_ && last))
    return;
  last_print_ = now;
  // The epoch's rest at the pace of its batches so far; the run's from the cluster's count.
  const double in_epoch = std::chrono::duration<double>(now - epoch_start_).count();
  const auto left = static_cast<double>(p.batches - std::min(p.batch, p.batches));
  const double epoch_eta = p.batch == 0 ? 0.0 : in_epoch * left / static_cast<double>(p.batch);
  const auto eta = fmt::format("ETA {} (run {})", format_duration(epoch_eta),
                               format_duration(p.eta_seconds));
  const auto nodes =
    p.nodes_alive > 1 ? fmt::format(", {} nodes alive", p.nodes_alive) : std::string{};
  // Steps as the metrics count them (`iterations`): every worker takes a batch a step.
  const auto workers = std::max<std::uint64_t>(p.workers, 1);
  const auto steps = fmt::format("step {}/{}", p.batch / workers,
                                 (p.batches + workers - 1) / workers);
  if (terminal_) {
    const int filled = p.batches == 0 ? 0 : static_cast<int>(bar_width * p.batch / p.batches);
    fmt::print(out_, "\r\033[Kepoch {}/{} [{:=<{}}{: <{}}] {} loss {:.4f} {:.0f} samples/s {}{}",
               p.epoch, p.epochs, "", filled, "", bar_width - filled, steps, p.mean_loss,
               p.samples_per_second, eta, nodes);
    std::fflush(out_);
    bar_drawn_ = true;
  } else {
    log::info("epoch {}/{} {} loss {:.4f} {:.0f} samples/s {}{}", p.epoch, p.epochs, steps,
              p.mean_loss, p.samples_per_second, eta, nodes);
  }
}

void progress_display::on_epoch(const epoch_summary& s) {
  end_line();
  const auto quality = s.test_accuracy < 0
                         ? std::string{"no test set"}
                         : fmt::format("test loss {:.4f}, test accuracy {:.2f}%", s.test_loss,
                                       100.0 * s.test_accuracy);
  fmt::print(out_, "epoch {}/{} done in {}: train loss {:.4f}, {}, {:.0f} samples/s\n", s.epoch,
             s.epochs, format_duration(s.seconds), s.train_loss, quality, s.samples_per_second);
  std::fflush(out_);
}

} // namespace strom::runtime
