#include "training_flags.hpp"

#include <fmt/format.h>

#include <string>

namespace strom::cli {

namespace {

/// The job check's own bound on training.batchSize (a million samples a step is a typo).
constexpr std::uint64_t max_batch_size = std::uint64_t{1} << 20;

} // namespace

option_spec batch_size_option() {
  return {"batch-size", "N", "override training.batchSize: samples a worker takes a step"};
}

option_spec learning_rate_option() {
  return {"learning-rate", "LR",
          "override training.updater.learningRate (its schedule, if any, starts from it)"};
}

result<void> read_training_flags(const arguments& args,
                                 runtime::local_training_options& overrides) {
  auto batch = args.get_uint(batch_size_option().name, 1, max_batch_size);
  if (!batch)
    return batch.err();
  if (auto n = batch.value())
    overrides.batch_size = static_cast<std::uint32_t>(*n);
  if (auto text = args.get(learning_rate_option().name)) {
    const auto rate = parse_finite_float(*text);
    if (!rate || !(*rate > 0.0f))
      return error{fmt::format("--learning-rate: '{}' is not a number above 0", *text)};
    overrides.learning_rate = *rate;
  }
  return success();
}

} // namespace strom::cli
