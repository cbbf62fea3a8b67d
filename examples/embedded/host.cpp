// A host program with its own CAF actor system that trains a strom job inside it.
//   strom_host JOB [--epochs N] [--workers N]
// Prints each epoch as it ends and then "accuracy A" (the test accuracy, 0..1); exits 1 with
// the message on any error.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <caf/all.hpp>

#include <strom/strom.hpp>

namespace {

/// Prints one line per finished epoch.
class epoch_printer : public strom::runtime::training_observer {
public:
  void on_epoch(const strom::runtime::epoch_summary& e) override {
    std::printf("epoch %u/%u: train loss %.4f, test accuracy %.4f, %.1f s, %.0f samples/s\n",
                e.epoch, e.epochs, e.train_loss, e.test_accuracy, e.seconds,
                e.samples_per_second);
    std::fflush(stdout);
  }
};

/// Command line: the job file, the epoch count and the trainers (0: one per core).
struct arguments {
  std::string job_file;
  unsigned long epochs = 1;
  unsigned long workers = 0;
};

/// Largest value accepted for --epochs and --workers; more is surely a typo.
constexpr unsigned long max_count = 1'000'000;

/// Reads a count from 1 to max_count; false (with a message on stderr) otherwise.
bool parse_count(const char* option, const char* text, unsigned long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoul(text, &end, 10);
  if (errno == 0 && end != text && *end == '\0' && out > 0 && out <= max_count)
    return true;
  std::fprintf(stderr, "strom_host: %s: expected 1 to %lu, found '%s'\n", option, max_count, text);
  return false;
}

/// Parses the command line; returns false (with a message on stderr) when it is wrong.
bool parse(int argc, char** argv, arguments& out) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--epochs" || arg == "--workers") && i + 1 < argc) {
      if (!parse_count(argv[i], argv[i + 1], arg == "--epochs" ? out.epochs : out.workers))
        return false;
      ++i;
    } else if (out.job_file.empty() && arg.rfind("--", 0) != 0) {
      out.job_file = arg;
    } else {
      std::fprintf(stderr, "strom_host: unexpected argument '%s'\n", arg.c_str());
      return false;
    }
  }
  if (out.job_file.empty()) {
    std::fprintf(stderr, "usage: strom_host JOB [--epochs N] [--workers N]\n");
    return false;
  }
  return true;
}

int run(const arguments& args) {
  // The host's own actor system; strom's types must be registered before it is created.
  caf::actor_system_config config;
  strom::runtime::configure_for_strom(config);
  caf::actor_system system{config};

  auto job = strom::runtime::load_job_file(args.job_file);
  if (!job) {
    std::fprintf(stderr, "strom_host: %s\n", job.err().message.c_str());
    return 1;
  }
  strom::embedded_runtime_options runtime_options;
  runtime_options.workers = static_cast<std::uint32_t>(args.workers);
  strom::embedded_runtime strom_runtime{system, runtime_options};
  epoch_printer printer;
  strom::runtime::local_training_options options;
  options.epochs = static_cast<std::uint32_t>(args.epochs);
  options.observer = &printer;
  auto report = strom_runtime.train(*job, options);
  if (!report) {
    std::fprintf(stderr, "strom_host: %s\n", report.err().message.c_str());
    return 1;
  }
  std::printf("%s: %u epoch(s) on %u worker(s) in %.1f s\n", report->job.c_str(), report->epochs,
              report->workers, report->wall_seconds);
  std::printf("accuracy %.4f\n", report->test_accuracy);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  arguments args;
  if (!parse(argc, argv, args))
    return 1;
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strom_host: %s\n", e.what());
    return 1;
  }
}
