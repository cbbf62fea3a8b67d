// strom predict: a trained model's classes and class probabilities for samples of one's own.

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <span>
#include <string>

#include "options/arguments.hpp"
#include "input_data.hpp"
#include "commands.hpp"
#include "strom/runtime/job/atomic_file.hpp"

namespace strom::cli {

namespace {

command_spec predict_spec() {
  auto options = input_data_options();
  options.push_back({"out", "FILE.csv", "write the predictions there (default: standard output)"});
  return {
    "strom predict CHECKPOINT --data FILE [--labels FILE] [--out FILE.csv]",
    "Predicts the class of every sample in FILE with a checkpoint saved by 'strom train': one\n"
    "CSV row a sample, index,predicted,p0,...,pK (the class probabilities), after a header\n"
    "line. With labels in the input it also prints the accuracy.",
    std::move(options),
    1,
  };
}

const command_spec spec = predict_spec();

} // namespace

int run_predict(int argc, char** argv) {
  auto parsed = parse_command(spec, "strom predict", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  if (!args->has("data")) {
    fmt::print(stderr, "strom predict: --data FILE is required\n");
    return exit_usage;
  }
  auto model = runtime::trained_model::load(args->positionals()[0]);
  if (!model) {
    fmt::print(stderr, "strom predict: {}\n", model.err().message);
    return exit_failure;
  }
  auto samples = load_input_data(*model, *args->get("data"), args->get("labels"));
  if (!samples) {
    fmt::print(stderr, "strom predict: {}\n", samples.err().message);
    return exit_failure;
  }
  const auto& data = samples->data;
  auto probabilities = model->predict(data.features, data.size());
  if (!probabilities) {
    fmt::print(stderr, "strom predict: {}\n", probabilities.err().message);
    return exit_failure;
  }
  const std::size_t classes = model->classes();
  fmt::memory_buffer csv;
  fmt::format_to(std::back_inserter(csv), "index,predicted");
  for (std::size_t k = 0; k < classes; ++k)
    fmt::format_to(std::back_inserter(csv), ",p{}", k);
  csv.push_back('\n');
  std::size_t correct = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto row = std::span{*probabilities}.subspan(i * classes, classes);
    const auto predicted = runtime::likeliest_class(row);
    correct += static_cast<std::uint32_t>(data.labels[i]) == predicted;
    fmt::format_to(std::back_inserter(csv), "{},{}", i, predicted);
    for (const float p : row)
      fmt::format_to(std::back_inserter(csv), ",{:.6g}", p);
    csv.push_back('\n');
  }
  if (const auto out = args->get("out")) {
    const auto bytes = std::as_bytes(std::span{csv.data(), csv.size()});
    if (auto written = runtime::write_file_atomically(*out, bytes, "predictions"); !written) {
      fmt::print(stderr, "strom predict: {}\n", written.err().message);
      return exit_failure;
    }
  } else {
    std::fwrite(csv.data(), 1, csv.size(), stdout);
  }
  if (samples->labelled)
    fmt::print(stderr, "strom predict: {} samples, accuracy {:.2f}%\n", data.size(),
               100.0 * static_cast<double>(correct) / static_cast<double>(std::max<std::size_t>(
                                                        data.size(), 1)));
  else
    fmt::print(stderr, "strom predict: {} samples\n", data.size());
  return exit_ok;
}

} // namespace strom::cli
