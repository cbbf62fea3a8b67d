#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "strom/runtime/job/output_paths.hpp"
#include "strom/runtime/report/report_data.hpp"
#include "strom/runtime/report/report_files.hpp"

namespace strom::cli {

namespace {

const command_spec report_spec{
  "strom report METRICS_JSON [--timeline FILE] -o FILE",
  "Writes the HTML report of a run from its metrics (--metrics-out) and, optionally, a\n"
  "timeline (--timeline): one self-contained page with its charts (loss and accuracy per\n"
  "epoch, samples/s, bytes, threshold and density per node over time, losses and restores\n"
  "marked), which works offline and requests nothing.",
  {
    {"timeline", "FILE", "a Chrome trace of the run (--timeline); per-node series from it"},
    {"out", "FILE", "the page to write (also -o FILE)"},
  },
  1,
};

} // namespace

int run_report(int argc, char** argv) {
  // -o is the one short option strom takes: the usual spelling for an output file.
  std::vector<char*> words(argv, argv + argc);
  static char out_option[] = "--out";
  for (auto& word : words)
    if (std::strcmp(word, "-o") == 0)
      word = out_option;
  auto parsed = parse_command(report_spec, "strom report", argc, words.data());
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  const auto out = args->get("out");
  if (!out || out->empty()) {
    fmt::print(stderr, "strom report: -o FILE is required: where to write the page\n");
    return exit_usage;
  }
  if (auto ok = runtime::check_writable_file(*out, "-o"); !ok) {
    fmt::print(stderr, "strom report: {}\n", ok.err().message);
    return exit_failure;
  }
  const auto& metrics_path = args->positionals()[0];
  auto metrics = runtime::read_report_input(metrics_path);
  if (!metrics) {
    fmt::print(stderr, "strom report: {}\n", metrics.err().message);
    return exit_failure;
  }
  if (auto ok = runtime::write_report_page(*out, *metrics, metrics_path, args->get("timeline"));
      !ok) {
    fmt::print(stderr, "strom report: {}\n", ok.err().message);
    return exit_failure;
  }
  fmt::print("strom report: wrote {}\n", *out);
  return exit_ok;
}

} // namespace strom::cli
