// strom export: a trained model as an ONNX file, for inference outside strom.

#include <fmt/format.h>

#include <string>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "strom/runtime/job/onnx_export.hpp"
#include "strom/runtime/trained_model.hpp"

namespace strom::cli {

namespace {

const command_spec export_spec{
  "strom export CHECKPOINT --onnx FILE",
  fmt::format(
    "Writes the network of a checkpoint saved by 'strom train' as an ONNX model (opset {}):\n"
    "its input 'input' takes samples as the job's data files hold them (N x C x H x W for\n"
    "images, N x F for feature vectors; the job's scaling and standardisation are the graph's\n"
    "first nodes), its output 'probabilities' gives the class probabilities, as 'strom\n"
    "predict' does.",
    runtime::onnx_opset),
  {{"onnx", "FILE", "write the ONNX model there (replaced whole, never left half-written)"}},
  1,
};

/// "N x 1 x 28 x 28".
std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string text = "N";
  for (const auto d : dims)
    text += fmt::format(" x {}", d);
  return text;
}

} // namespace

int run_export(int argc, char** argv) {
  auto parsed = parse_command(export_spec, "strom export", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  const auto out = args->get("onnx");
  if (!out) {
    fmt::print(stderr, "strom export: --onnx FILE is required (the only format strom "
                       "exports to)\n");
    return exit_usage;
  }
  const auto& checkpoint = args->positionals()[0];
  auto model = runtime::trained_model::load(checkpoint);
  if (!model) {
    fmt::print(stderr, "strom export: {}\n", model.err().message);
    return exit_failure;
  }
  auto exported = runtime::export_onnx(model->net(), model->job(), *out);
  if (!exported) {
    fmt::print(stderr, "strom export: {}: {}\n", checkpoint, exported.err().message);
    return exit_failure;
  }
  fmt::print(stderr,
             "strom export: {} (ONNX opset {}, {} nodes, input {}, {} classes, {} bytes)\n", *out,
             runtime::onnx_opset, exported->nodes, shape_text(exported->input_dims),
             exported->classes, exported->bytes.size());
  return exit_ok;
}

} // namespace strom::cli
