#define BOOST_TEST_MODULE runtime_checkpoint_resume
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/checkpoint_resume.hpp"
#include "strom/runtime/job/checkpoint_runs.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "support/scratch_dir.hpp"
#include "support/small_fashion_job.hpp"

// Runs that go on from a checkpoint, on real Fashion-MNIST in in-process clusters: with one
// worker they end bit for bit where the uninterrupted run ends (parameters, updater state,
// learning-rate schedule, dropout masks, data order); with other worker and node counts and
// modes within noise of it.

using namespace strom;
namespace fs = std::filesystem;

namespace {

/// A job whose resume has everything to get right: Adam's moments, a schedule by epoch, a
/// dropout layer's masks, shuffled data.
std::string resume_job_text() {
  return R"((
  name = "resume_mlp",
  network = (
    input = (channels = 1, height = 28, width = 28),
    weightInit = he,
    layers = [(dense = (units = 64, activation = relu)), (dropout = (rate = 0.2)),
              (output = (units = 10, weightInit = xavier))]
  ),
  )" + testing::fashion_mnist_test_set_data_text() + R"(,
  training = (epochs = 3, batchSize = 64, seed = 7,
              updater = (learningRate = 0.002, adam = (),
                         schedule = (unit = epoch, exponential = (gamma = 0.7))))
))";
}

/// A folder `name` in the test's scratch folder.
std::string folder(const test::scratch& s, const std::string& name) {
  return (s.path() / name).string();
}

/// Trains from the start into `checkpoint_dir` (every epoch's checkpoint kept).
runtime::training_report train(runtime::cluster_shape shape, const std::string& checkpoint_dir,
                               std::optional<schema::TrainingMode> mode = {}) {
  auto job = runtime::parse_job_text(resume_job_text(), "resume_mlp.job", ".");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  runtime::local_training_options options;
  options.checkpoint_dir = checkpoint_dir;
  options.keep_checkpoints = 0;
  options.mode = mode;
  auto run = runtime::train_on_cluster(*job, options, shape);
  BOOST_REQUIRE_MESSAGE(run, (run ? "" : run.err().message));
  return *run;
}

/// Goes on from the checkpoint `path` names, as `strom train --resume PATH` does.
result<runtime::training_report> resume(const std::string& path, runtime::cluster_shape shape,
                                        const std::string& checkpoint_dir,
                                        std::optional<schema::TrainingMode> mode = {},
                                        std::optional<std::uint32_t> epochs = {}) {
  auto point = runtime::find_resume_point(path);
  if (!point)
    return point.err();
  runtime::job_spec job{point->saved.job.reader(), point->path};
  runtime::local_training_options options;
  options.checkpoint_dir = checkpoint_dir;
  options.keep_checkpoints = 0;
  options.mode = mode;
  options.epochs = epochs;
  options.resume = std::make_shared<const runtime::checkpoint_contents>(std::move(point->saved));
  return runtime::train_on_cluster(job, options, shape);
}

runtime::checkpoint_contents load(const std::string& path) {
  auto saved = runtime::load_checkpoint(path);
  BOOST_REQUIRE_MESSAGE(saved, (saved ? "" : saved.err().message));
  return std::move(*saved);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_CASE(one_worker_resumed_at_each_epoch_boundary_ends_bit_for_bit_where_it_would_have) {
  test::scratch s;
  const auto whole = train({1, 1}, folder(s, "whole"));
  const auto run = folder(s, "whole") + "/resume_mlp/run-1";
  const auto end = load(runtime::epoch_checkpoint_path(run, 3));
  BOOST_TEST(end.progress.workers == 1u);
  BOOST_TEST(end.progress.nodes == 1u);
  // An interrupted run leaves exactly the checkpoints the whole run wrote up to its stop.
  for (std::uint32_t stop : {1u, 2u}) {
    auto resumed = resume(runtime::epoch_checkpoint_path(run, stop), {1, 1},
                          folder(s, "resumed" + std::to_string(stop)));
    BOOST_REQUIRE_MESSAGE(resumed, (resumed ? "" : resumed.err().message));
    BOOST_TEST(resumed->epochs == 3u);
    BOOST_TEST(resumed->iterations == whole.iterations);
    BOOST_TEST(resumed->test_loss == whole.test_loss);
    BOOST_TEST(resumed->final_loss == whole.final_loss);
    const auto again = load(resumed->checkpoint);
    BOOST_TEST(again.progress.epoch == 3u);
    BOOST_TEST(again.parameters == end.parameters, "stopped after epoch " << stop);
    BOOST_TEST(again.updater_state == end.updater_state, "stopped after epoch " << stop);
    BOOST_TEST(again.layer_state == end.layer_state, "stopped after epoch " << stop);
  }
}

BOOST_AUTO_TEST_CASE(a_checkpoint_of_two_workers_goes_on_with_other_counts_and_modes_within_noise) {
  test::scratch s;
  const auto whole = train({1, 2}, folder(s, "two"));
  const auto first = runtime::epoch_checkpoint_path(folder(s, "two") + "/resume_mlp/run-1", 1);
  BOOST_TEST(load(first).progress.workers == 2u);
  struct variant {
    const char* what;
    runtime::cluster_shape shape;
    std::optional<schema::TrainingMode> mode;
  };
  for (const auto& [what, shape, mode] :
       {variant{"one worker", {1, 1}, {}}, variant{"two nodes", {2, 1}, {}},
        variant{"two nodes averaging", {2, 1}, schema::TrainingMode::AVERAGING}}) {
    auto resumed = resume(first, shape, folder(s, what), mode);
    BOOST_REQUIRE_MESSAGE(resumed, what << ": " << (resumed ? "" : resumed.err().message));
    BOOST_TEST_MESSAGE(what << ": accuracy " << resumed->test_accuracy << " against "
                            << whole.test_accuracy);
    BOOST_TEST(resumed->epochs == 3u, what);
    BOOST_TEST(resumed->train_samples == 2u * 10000u, what << ": epochs 2 and 3 only");
    // Fewer workers take more steps an epoch: one worker ends a little above the pair (0.842
    // against 0.826 measured); none may end below it.
    BOOST_TEST(resumed->test_accuracy > whole.test_accuracy - 0.02, what);
    BOOST_TEST(resumed->test_accuracy < whole.test_accuracy + 0.03, what);
    BOOST_TEST(resumed->duplicate_updates_applied == 0u, what);
    const auto last = load(resumed->checkpoint);
    BOOST_TEST(last.progress.epoch == 3u, what);
    BOOST_TEST(last.progress.workers == shape.nodes * shape.workers, what);
  }
}

BOOST_AUTO_TEST_CASE(a_resume_that_cannot_go_on_is_refused_naming_the_checkpoint_and_why) {
  test::scratch s;
  train({1, 1}, folder(s, "done"));
  const auto run = folder(s, "done") + "/resume_mlp/run-1";
  const auto last = runtime::epoch_checkpoint_path(run, 3);
  // The folder names its newest run's latest checkpoint, which holds every epoch.
  auto finished = resume(folder(s, "done"), {1, 1}, folder(s, "out"));
  BOOST_REQUIRE(!finished);
  BOOST_TEST(contains(finished.err().message, last), finished.err().message);
  BOOST_TEST(contains(finished.err().message, "the checkpoint holds 3 epochs, and the job trains "
                                              "3: give --epochs with more"),
             finished.err().message);
  BOOST_TEST(!fs::exists(s.path() / "out"), "a refused resume makes no run folder");
  auto longer = resume(folder(s, "done"), {1, 1}, folder(s, "out"), {}, 4);
  BOOST_REQUIRE_MESSAGE(longer, (longer ? "" : longer.err().message));
  BOOST_TEST(longer->epochs == 4u);
  BOOST_TEST(load(longer->checkpoint).progress.epoch == 4u);

  auto missing = resume(folder(s, "nowhere"), {1, 1}, folder(s, "out"));
  BOOST_REQUIRE(!missing);
  BOOST_TEST(contains(missing.err().message, "no such file or folder"), missing.err().message);
  fs::create_directories(s.path() / "empty");
  auto empty = resume(folder(s, "empty"), {1, 1}, folder(s, "out"));
  BOOST_REQUIRE(!empty);
  BOOST_TEST(contains(empty.err().message, "no checkpoint here"), empty.err().message);
}

BOOST_AUTO_TEST_CASE(a_kvstore_job_checkpoints_the_servers_optimizer_and_resumes_from_it) {
  test::scratch s;
  runtime::cluster_shape shape{1, 1};
  shape.servers = 1;
  const auto whole = train(shape, folder(s, "kv"), schema::TrainingMode::KVSTORE);
  const auto run = folder(s, "kv") + "/resume_mlp/run-1";
  const auto end = load(runtime::epoch_checkpoint_path(run, 3));
  // Adam runs on the server: its moments are in the checkpoint, not the worker's zeros.
  BOOST_TEST(std::any_of(end.updater_state.begin(), end.updater_state.end(),
                         [](float v) { return v != 0.0f; }));
  BOOST_TEST(end.progress.iteration == whole.iterations);

  // The servers start from the checkpoint's parameters and updater state, the worker from
  // its parameters: the run ends where the whole run ended.
  auto resumed = resume(runtime::epoch_checkpoint_path(run, 2), shape, folder(s, "again"),
                        schema::TrainingMode::KVSTORE);
  BOOST_REQUIRE_MESSAGE(resumed, (resumed ? "" : resumed.err().message));
  BOOST_TEST(resumed->epochs == 3u);
  BOOST_TEST(resumed->test_loss == whole.test_loss, boost::test_tools::tolerance(1e-6));
  const auto again = load(resumed->checkpoint);
  BOOST_TEST(again.parameters == end.parameters);
  BOOST_TEST(again.updater_state == end.updater_state);

  // A kvstore checkpoint goes on in shared mode, and a shared one on parameter servers.
  auto shared = resume(runtime::epoch_checkpoint_path(run, 2), {1, 2}, folder(s, "shared"),
                       schema::TrainingMode::SHARED);
  BOOST_REQUIRE_MESSAGE(shared, (shared ? "" : shared.err().message));
  BOOST_TEST_MESSAGE("kvstore " << whole.test_accuracy << ", resumed shared on 2 workers "
                                << shared->test_accuracy);
  BOOST_TEST(std::abs(shared->test_accuracy - whole.test_accuracy) < 0.02);
  runtime::cluster_shape two_nodes{2, 1};
  two_nodes.servers = 1;
  auto served = resume(runtime::epoch_checkpoint_path(run, 2), two_nodes, folder(s, "served"),
                       schema::TrainingMode::KVSTORE);
  BOOST_REQUIRE_MESSAGE(served, (served ? "" : served.err().message));
  BOOST_TEST_MESSAGE("resumed on 2 nodes and a server " << served->test_accuracy);
  BOOST_TEST(std::abs(served->test_accuracy - whole.test_accuracy) < 0.02);
}
