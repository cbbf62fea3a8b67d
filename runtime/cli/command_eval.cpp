#include <fmt/format.h>

#include "options/arguments.hpp"
#include "input_data.hpp"
#include "commands.hpp"
#include "strom/compute/data/dataset_from_spec.hpp"
#include "strom/compute/evaluation.hpp"

namespace strom::cli {

namespace {

const command_spec eval_spec{
  "strom eval CHECKPOINT [--data FILE [--labels FILE]]",
  "Evaluates a checkpoint saved by 'strom train' on the test set named in its job, or on\n"
  "labelled samples of its own (--data).",
  input_data_options(),
  1,
};

} // namespace

int run_eval(int argc, char** argv) {
  auto parsed = parse_command(eval_spec, "strom eval", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  const auto& path = args->positionals()[0];
  auto model = runtime::trained_model::load(path);
  if (!model) {
    fmt::print(stderr, "strom eval: {}\n", model.err().message);
    return exit_failure;
  }
  auto spec = model->job().reader();
  compute::dataset test;
  if (args->has("data")) {
    auto samples = load_input_data(*model, *args->get("data"), args->get("labels"));
    if (!samples) {
      fmt::print(stderr, "strom eval: {}\n", samples.err().message);
      return exit_failure;
    }
    if (!samples->labelled) {
      fmt::print(stderr, "strom eval: {}: the samples carry no labels (give IDX images "
                         "--labels FILE, or CSV rows a label column); 'strom predict' "
                         "predicts without them\n", *args->get("data"));
      return exit_failure;
    }
    if (auto ok = model->preprocess(samples->data); !ok) {
      fmt::print(stderr, "strom eval: {}\n", ok.err().message);
      return exit_failure;
    }
    test = std::move(samples->data);
  } else {
    auto data = compute::load_data(spec.getData(), ".");
    if (!data) {
      fmt::print(stderr, "strom eval: {}: {}\n", path, data.err().message);
      return exit_failure;
    }
    if (data->test.size() == 0) {
      fmt::print(stderr, "strom eval: {}: the job names no test set (data.test)\n", path);
      return exit_failure;
    }
    test = std::move(data->test);
  }
  auto quality = compute::evaluate(model->net(), test);
  fmt::print("{}: job {}, epoch {}, iteration {}\n", path, spec.getName().cStr(),
             model->progress().epoch, model->progress().iteration);
  if (args->has("data"))
    fmt::print("  accuracy {:.2f}% on {} samples of {}, loss {:.4f}\n", 100.0 * quality.accuracy,
               quality.samples, *args->get("data"), quality.loss);
  else
    fmt::print("  test accuracy {:.2f}% on {} samples, test loss {:.4f}\n",
               100.0 * quality.accuracy, quality.samples, quality.loss);
  return exit_ok;
}

} // namespace strom::cli
