#include "strom/runtime/metrics_report.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

namespace strom::runtime {

namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

/// JSON has no NaN or infinity: a diverged run reports null.
std::string json_number(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : "null";
}

} // namespace

std::string to_json(const training_report& r) {
  return fmt::format(
    "{{\"job\":{},\"test_accuracy\":{},\"test_loss\":{},\"final_loss\":{},\"epochs\":{},"
    "\"workers\":{},\"nodes\":{},\"wall_seconds\":{},\"train_seconds\":{},\"train_samples\":{},"
    "\"train_samples_per_second\":{},\"iterations\":{},\"checkpoint\":{}}}",
    json_string(r.job), json_number(r.test_accuracy), json_number(r.test_loss),
    json_number(r.final_loss), r.epochs, r.workers, r.nodes, json_number(r.wall_seconds),
    json_number(r.train_seconds), r.train_samples, json_number(r.train_samples_per_second),
    r.iterations, json_string(r.checkpoint));
}

result<void> write_metrics(const std::string& path, const training_report& report) {
  std::ofstream out{path, std::ios::trunc};
  if (!out)
    return error{fmt::format("{}: cannot write metrics: {}", path, std::strerror(errno))};
  out << to_json(report) << '\n';
  if (!out.flush())
    return error{fmt::format("{}: cannot write metrics: {}", path, std::strerror(errno))};
  return success();
}

} // namespace strom::runtime
