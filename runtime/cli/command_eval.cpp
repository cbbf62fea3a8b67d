#include <fmt/format.h>

#include "arguments.hpp"
#include "commands.hpp"
#include "strom/compute/data/dataset_from_spec.hpp"
#include "strom/compute/evaluation.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/checkpoint.hpp"

namespace strom::cli {

namespace {

const command_spec eval_spec{
  "strom eval CHECKPOINT",
  "Evaluates a checkpoint saved by 'strom train' on the test set named in its job.",
  {},
  1,
};

} // namespace

int run_eval(int argc, char** argv) {
  auto parsed = parse_command(eval_spec, "strom eval", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  const auto& path = args->positionals()[0];
  auto saved = runtime::load_checkpoint(path);
  if (!saved) {
    fmt::print(stderr, "strom eval: {}\n", saved.err().message);
    return exit_failure;
  }
  auto spec = saved->job.reader();
  auto built = compute::make_replica(spec, 0);
  if (!built) {
    fmt::print(stderr, "strom eval: {}: job in checkpoint: {}\n", path, built.err().message);
    return exit_failure;
  }
  if (auto ok = runtime::restore_checkpoint(*saved, **built); !ok) {
    fmt::print(stderr, "strom eval: {}: {}\n", path, ok.err().message);
    return exit_failure;
  }
  auto data = compute::load_data(spec.getData(), ".");
  if (!data) {
    fmt::print(stderr, "strom eval: {}: {}\n", path, data.err().message);
    return exit_failure;
  }
  if (data->test.size() == 0) {
    fmt::print(stderr, "strom eval: {}: the job names no test set (data.test)\n", path);
    return exit_failure;
  }
  auto quality = compute::evaluate((*built)->net(), data->test);
  fmt::print("{}: job {}, epoch {}, iteration {}\n  test accuracy {:.2f}% on {} samples, test loss {:.4f}\n",
             path, spec.getName().cStr(), saved->progress.epoch, saved->progress.iteration,
             100.0 * quality.accuracy, quality.samples, quality.loss);
  return exit_ok;
}

} // namespace strom::cli
