#define BOOST_TEST_MODULE runtime_checkpoint_runs
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/checkpoint_runs.hpp"

using namespace strom;
using namespace strom::runtime;
namespace fs = std::filesystem;

namespace {

constexpr const char* small_job = R"((
  name = "tiny",
  network = (input = (width = 4), layers = [(output = (units = 2))]),
  training = (batchSize = 2, seed = 3, updater = (learningRate = 0.1, sgd = void))))";

struct fixture {
  fs::path dir = fs::temp_directory_path() / "strom_checkpoint_runs_test";
  job_spec job = *parse_job_text(small_job, "tiny.job", ".");
  std::unique_ptr<compute::replica> trained = *compute::make_replica(job.reader(), 0);

  fixture() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~fixture() { fs::remove_all(dir); }

  /// Saves the run's checkpoint after `epoch` epochs with test accuracy `accuracy`.
  std::string save(const checkpoint_plan& plan, std::uint32_t epoch, float accuracy) {
    auto saved = save_run_checkpoint(plan, job, *trained, {epoch, epoch * 10ull, 0, accuracy, 0.5f});
    BOOST_REQUIRE_MESSAGE(saved.ok(), (saved.ok() ? "" : saved.err().message));
    return *saved;
  }

  /// The file names in `folder`, sorted.
  static std::vector<std::string> names_in(const std::string& folder) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(each_run_gets_a_new_numbered_folder_under_the_job, fixture) {
  const auto first = new_run_folder(dir.string(), "tiny");
  BOOST_REQUIRE(first.ok());
  BOOST_TEST(*first == (dir / "tiny" / "run-1").string());
  // Other names beside the runs are not runs; numbers need not be contiguous.
  fs::create_directories(dir / "tiny" / "run-7");
  fs::create_directories(dir / "tiny" / "run-x");
  fs::create_directories(dir / "tiny" / "notes");
  const auto next = new_run_folder(dir.string(), "tiny");
  BOOST_REQUIRE(next.ok());
  BOOST_TEST(*next == (dir / "tiny" / "run-8").string());
  BOOST_TEST(fs::is_directory(*next));
}

BOOST_FIXTURE_TEST_CASE(a_run_folder_that_cannot_be_made_is_an_error_naming_it, fixture) {
  const auto file = dir / "file";
  { std::ofstream{file} << "x"; }
  const auto refused = new_run_folder(file.string(), "tiny");
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.err().message.find("--checkpoint-dir " + file.string()) != std::string::npos,
             refused.err().message);
}

// A cluster job's first node on another machine does not find the run folder the submitting
// machine made: it makes the same path on its own.
BOOST_FIXTURE_TEST_CASE(a_node_makes_a_run_folder_it_does_not_find, fixture) {
  const auto folder = dir / "elsewhere" / "tiny" / "run-3";
  BOOST_TEST(save({folder.string(), 3}, 1, 0.5f) == (folder / "epoch-0001.ckpt").string());
  BOOST_TEST(fs::exists(folder / "best.ckpt"));
  const auto file = dir / "file";
  { std::ofstream{file} << "x"; }
  const auto refused =
    save_run_checkpoint({(file / "run-1").string(), 3}, job, *trained, {1, 10, 0, 0.5f, 0.5f});
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.err().message.find("checkpoint folder " + (file / "run-1").string())
               != std::string::npos,
             refused.err().message);
}

BOOST_FIXTURE_TEST_CASE(keeps_the_last_k_epochs_and_the_best_by_test_accuracy, fixture) {
  const checkpoint_plan plan{*new_run_folder(dir.string(), "tiny"), 2};
  BOOST_TEST(save(plan, 1, 0.60f) == epoch_checkpoint_path(plan.folder, 1));
  save(plan, 2, 0.80f);  // the best
  save(plan, 3, 0.70f);
  save(plan, 4, 0.75f);
  BOOST_TEST(names_in(plan.folder)
               == (std::vector<std::string>{"best.ckpt", "epoch-0003.ckpt", "epoch-0004.ckpt"}),
             boost::test_tools::per_element());
  const auto best = load_checkpoint(best_checkpoint_path(plan.folder));
  BOOST_REQUIRE(best.ok());
  BOOST_TEST(best->progress.epoch == 2u);
  BOOST_TEST(best->progress.test_accuracy == 0.80f);
  const auto last = load_checkpoint(epoch_checkpoint_path(plan.folder, 4));
  BOOST_REQUIRE(last.ok());
  BOOST_TEST(last->progress.epoch == 4u);
}

BOOST_FIXTURE_TEST_CASE(keep_zero_keeps_every_epoch, fixture) {
  const checkpoint_plan plan{*new_run_folder(dir.string(), "tiny"), 0};
  for (std::uint32_t epoch = 1; epoch <= 4; ++epoch)
    save(plan, epoch, 0.5f);
  BOOST_TEST(names_in(plan.folder).size() == 5u);  // four epochs and the best
}

BOOST_FIXTURE_TEST_CASE(without_a_test_set_no_best_is_kept, fixture) {
  const checkpoint_plan plan{*new_run_folder(dir.string(), "tiny"), 3};
  save(plan, 1, -1.0f);
  BOOST_TEST(names_in(plan.folder) == (std::vector<std::string>{"epoch-0001.ckpt"}),
             boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(a_second_run_leaves_the_first_runs_checkpoints_alone, fixture) {
  const checkpoint_plan first{*new_run_folder(dir.string(), "tiny"), 1};
  save(first, 1, 0.9f);
  save(first, 2, 0.95f);
  const checkpoint_plan second{*new_run_folder(dir.string(), "tiny"), 1};
  save(second, 1, 0.2f);
  BOOST_TEST(first.folder != second.folder);
  const auto kept = load_checkpoint(epoch_checkpoint_path(first.folder, 2));
  BOOST_REQUIRE(kept.ok());
  BOOST_TEST(kept->progress.test_accuracy == 0.95f);
  BOOST_TEST(load_checkpoint(best_checkpoint_path(first.folder))->progress.test_accuracy == 0.95f);
}

BOOST_FIXTURE_TEST_CASE(the_latest_checkpoint_is_the_newest_runs_last_epoch_from_any_level, fixture) {
  const auto touch = [&](const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream{path} << "x";
  };
  const auto job_folder = dir / "tiny";
  for (const char* name : {"run-1/epoch-0001.ckpt", "run-1/epoch-0002.ckpt", "run-1/best.ckpt",
                           "run-3/epoch-0009.ckpt", "run-3/epoch-0010.ckpt"})
    touch(job_folder / name);
  fs::create_directories(job_folder / "run-4");  // a run stopped before its first epoch
  const auto newest = (job_folder / "run-3" / "epoch-0010.ckpt").string();
  for (const auto& level : {dir, job_folder}) {
    auto latest = latest_checkpoint(level.string());
    BOOST_REQUIRE_MESSAGE(latest.ok(), (latest.ok() ? "" : latest.err().message));
    BOOST_TEST(*latest == newest, level);
  }
  auto in_run = latest_checkpoint((job_folder / "run-1").string());
  BOOST_REQUIRE(in_run.ok());
  BOOST_TEST(*in_run == (job_folder / "run-1" / "epoch-0002.ckpt").string());
  BOOST_TEST(checkpoint_dir_of(newest) == dir.string());
  BOOST_TEST(checkpoint_dir_of((dir / "loose.ckpt").string()).empty());

  touch(dir / "other" / "run-1" / "epoch-0001.ckpt");
  auto two_jobs = latest_checkpoint(dir.string());
  BOOST_REQUIRE(!two_jobs.ok());
  BOOST_TEST(two_jobs.err().message.find("holds the checkpoints of 2 jobs; name one job's folder")
               != std::string::npos,
             two_jobs.err().message);
  auto nothing = latest_checkpoint((job_folder / "run-4").string());
  BOOST_REQUIRE(!nothing.ok());
  BOOST_TEST(nothing.err().message.find("no checkpoint here") != std::string::npos,
             nothing.err().message);
}
