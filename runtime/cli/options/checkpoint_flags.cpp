#include "checkpoint_flags.hpp"

#include <cstdint>
#include <memory>

#include "strom/runtime/job/job_spec.hpp"

namespace strom::cli {

namespace {

/// More epoch checkpoints than any run has epochs is "every one".
constexpr std::uint64_t max_keep_checkpoints = 1'000'000;

} // namespace

command_spec with_checkpoint_options(command_spec spec, const std::string& dir_help) {
  spec.options.push_back(
    {"checkpoint-dir", "DIR",
     dir_help + " (default: " + default_checkpoint_dir + "; with --resume, beside the run it "
     "came from); each run saves into a new folder DIR/JOBNAME/run-N (epoch-E.ckpt, best.ckpt)"});
  spec.options.push_back({"no-checkpoints", "", "save no checkpoints"});
  spec.options.push_back(
    {"keep-checkpoints", "K",
     "keep the run's last K epoch checkpoints besides its best (default 3; 0 keeps every one)"});
  spec.options.push_back(
    {"resume", "PATH",
     "go on from a checkpoint instead of a JOB file: PATH is a .ckpt file or a checkpoint "
     "folder (its newest run's latest epoch); its job, workers and nodes unless given"});
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

result<void> read_checkpoint_dir(const arguments& args, runtime::local_training_options& options) {
  const auto dir = args.get("checkpoint-dir");
  if (dir && args.has("no-checkpoints"))
    return error{"give --checkpoint-dir DIR or --no-checkpoints, not both"};
  if (args.has("no-checkpoints"))
    options.checkpoint_dir.clear();
  else
    options.checkpoint_dir = dir.value_or(default_checkpoint_dir);
  return success();
}

result<void> check_job_or_resume(const arguments& args) {
  const auto files = args.positionals().size();
  if (args.has("resume") ? files == 0 : files == 1)
    return success();
  return error{args.has("resume") ? "give a JOB file or --resume PATH, not both"
                                  : "give a JOB file, or --resume PATH to go on from a checkpoint"};
}

result<runtime::job_spec> read_job_or_resume(const arguments& args,
                                             runtime::local_training_options& options) {
  const auto resume = args.get("resume");
  if (!resume)
    return runtime::load_job_file(args.positionals().front());
  auto point = runtime::find_resume_point(*resume);
  if (!point)
    return point.err();
  if (!args.has("checkpoint-dir") && !args.has("no-checkpoints"))
    options.checkpoint_dir = runtime::resumed_checkpoint_dir(point->path, options.checkpoint_dir);
  // A copy of its own: the run's overrides must not change the checkpoint's job.
  runtime::job_spec job{point->saved.job.reader(), point->path};
  options.resume = std::make_shared<const runtime::checkpoint_contents>(std::move(point->saved));
  return job;
}

} // namespace strom::cli
