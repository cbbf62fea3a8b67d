#include "checkpoint_flags.hpp"

#include <cstdint>

namespace strom::cli {

namespace {

/// More epoch checkpoints than any run has epochs is "every one".
constexpr std::uint64_t max_keep_checkpoints = 1'000'000;

} // namespace

command_spec with_checkpoint_options(command_spec spec, const std::string& dir_help) {
  spec.options.push_back(
    {"checkpoint-dir", "DIR",
     dir_help + "; each run saves into a new folder DIR/JOBNAME/run-N (epoch-E.ckpt, best.ckpt)"});
  spec.options.push_back(
    {"keep-checkpoints", "K",
     "keep the run's last K epoch checkpoints besides its best (default 3; 0 keeps every one)"});
  return spec;
}

result<void> read_keep_checkpoints(const arguments& args,
                                   runtime::local_training_options& options) {
  auto keep = args.get_uint("keep-checkpoints", 0, max_keep_checkpoints);
  if (!keep)
    return keep.err();
  if (*keep)
    options.keep_checkpoints = static_cast<std::uint32_t>(**keep);
  return success();
}

} // namespace strom::cli
