#define BOOST_TEST_MODULE runtime_embedded_runtime
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "data/fixtures.hpp"
#include "strom/strom.hpp"

using namespace strom;

namespace {

/// Classes and features of the synthetic problem: class c sits at +3 on feature c.
constexpr int classes = 3;
constexpr int features = 4;
constexpr float class_offset = 3.0f;

/// Rows of `count` samples, label first, features with uniform noise in [-1, 1]: linearly
/// separable, so a few epochs reach nearly full accuracy.
std::string blob_csv(int count, std::uint32_t seed) {
  std::mt19937 gen{seed};
  std::string text;
  for (int i = 0; i < count; ++i) {
    const int label = i % classes;
    text += std::to_string(label);
    for (int f = 0; f < features; ++f) {
      // mt19937's output is fixed by the standard; distributions are not, so scale by hand.
      const float noise = static_cast<float>(gen()) / 4294967295.0f * 2.0f - 1.0f;
      text += ',' + std::to_string((f == label ? class_offset : 0.0f) + noise);
    }
    text += '\n';
  }
  return text;
}

/// A small job on CSV files in a scratch folder; `train_file` may name a missing file. Its
/// 131 parameters take few steps: the default adaptive threshold (1e-4 at first) would move
/// them too little to learn, a fixed 0.01 reaches 0.99-1.0 test accuracy in 1-3 epochs with
/// two workers (measured, 3 runs each).
struct blob_job {
  test::scratch_dir dir;

  blob_job() {
    dir.write_text("train.csv", blob_csv(600, 1));
    dir.write_text("test.csv", blob_csv(150, 2));
  }

  runtime::job_spec make(const std::string& train_file = "train.csv") const {
    const std::string text = R"((
      name = "blobs",
      network = (input = (width = 4), layers = [
        (dense = (units = 16, activation = relu)), (output = (units = 3))]),
      data = (train = (csv = (path = ")" + train_file + R"(")),
              test = (csv = (path = "test.csv"))),
      training = (epochs = 3, batchSize = 16, seed = 7,
                  updater = (learningRate = 0.1, sgd = void)),
      distributed = (sharing = (threshold = (fixed = (threshold = 0.01))))))";
    auto job = runtime::parse_job_text(text, "blobs.job", dir.path().string());
    BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
    return std::move(*job);
  }
};

/// Counts the epochs a run reports.
struct epoch_counter : runtime::training_observer {
  std::uint32_t epochs = 0;
  void on_epoch(const runtime::epoch_summary&) override { ++epochs; }
};

/// A host program's own actor system, set up for strom.
struct host_system {
  caf::actor_system_config config;
  std::unique_ptr<caf::actor_system> system;

  host_system() {
    runtime::configure_for_strom(config);
    system = std::make_unique<caf::actor_system>(config);
  }
};

/// Two trainers, whatever the machine's core count.
constexpr embedded_runtime_options two_workers{2};

/// Accuracy a run on the blobs must reach (chance is 1/3).
constexpr double blob_accuracy = 0.9;

} // namespace

BOOST_AUTO_TEST_CASE(owning_runtime_trains_a_job_and_reports_each_epoch) {
  blob_job files;
  auto job = files.make();
  embedded_runtime strom_runtime{two_workers};
  epoch_counter counter;
  runtime::local_training_options options;
  options.epochs = 2;
  options.observer = &counter;
  auto report = strom_runtime.train(job, options);
  BOOST_REQUIRE_MESSAGE(report, (report ? "" : report.err().message));
  BOOST_TEST(report->epochs == 2u);
  BOOST_TEST(counter.epochs == 2u);
  BOOST_TEST(report->workers == 2u);
  BOOST_TEST(report->test_accuracy >= blob_accuracy);
}

BOOST_AUTO_TEST_CASE(attached_runtime_trains_in_the_host_system) {
  host_system host;
  blob_job files;
  auto job = files.make();
  {
    embedded_runtime strom_runtime{*host.system, two_workers};
    BOOST_TEST(&strom_runtime.system() == host.system.get());
    auto report = strom_runtime.train(job, {});
    BOOST_REQUIRE_MESSAGE(report, (report ? "" : report.err().message));
    BOOST_TEST(report->epochs == 3u);
    BOOST_TEST(report->test_accuracy >= blob_accuracy);
  }
  // The host's system goes on after the runtime is gone.
  caf::scoped_actor self{*host.system};
  auto echo = host.system->spawn([]() -> caf::behavior { return {[](int x) { return x; }}; });
  int answer = 0;
  self->request(echo, std::chrono::seconds(5), 41 + 1).receive([&](int x) { answer = x; },
                                                              [](caf::error&) {});
  BOOST_TEST(answer == 42);
  self->send_exit(echo, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(two_jobs_in_a_row_run_on_the_same_runtime) {
  blob_job files;
  embedded_runtime strom_runtime{two_workers};
  runtime::local_training_options one_epoch;
  one_epoch.epochs = 1;
  std::uint64_t previous_id = 0;
  for (int round = 0; round < 2; ++round) {
    auto job = files.make();
    auto job_id = strom_runtime.submit(job, one_epoch);
    BOOST_REQUIRE_MESSAGE(job_id, (job_id ? "" : job_id.err().message));
    BOOST_TEST(*job_id != previous_id);
    previous_id = *job_id;
    epoch_counter counter;
    auto report = strom_runtime.wait(*job_id, &counter);
    BOOST_REQUIRE_MESSAGE(report, (report ? "" : report.err().message));
    BOOST_TEST(report->epochs == 1u);
    BOOST_TEST(report->train_samples == 600u);
  }
}

BOOST_AUTO_TEST_CASE(a_missing_data_file_fails_the_job_naming_the_file) {
  blob_job files;
  auto job = files.make("missing.csv");
  embedded_runtime strom_runtime{two_workers};
  auto report = strom_runtime.train(job, {});
  BOOST_REQUIRE(!report);
  BOOST_TEST(report.err().message.find(files.dir.file("missing.csv")) != std::string::npos,
             report.err().message);
}

BOOST_AUTO_TEST_CASE(a_failed_job_leaves_the_runtime_usable) {
  blob_job files;
  embedded_runtime strom_runtime{two_workers};
  auto broken = files.make("missing.csv");
  BOOST_REQUIRE(!strom_runtime.train(broken, {}));
  auto good = files.make();
  runtime::local_training_options one_epoch;
  one_epoch.epochs = 1;
  auto retried = strom_runtime.train(good, one_epoch);
  BOOST_TEST(retried.ok(), (retried ? "" : retried.err().message));
}

BOOST_AUTO_TEST_CASE(waiting_for_an_unknown_job_fails_naming_it) {
  embedded_runtime strom_runtime{two_workers};
  auto report = strom_runtime.wait(999);
  BOOST_REQUIRE(!report);
  BOOST_TEST(report.err().message.find("999") != std::string::npos, report.err().message);
}

BOOST_AUTO_TEST_CASE(a_host_system_without_strom_types_is_refused) {
  caf::actor_system_config bare;
  caf::actor_system system{bare};
  BOOST_CHECK_THROW((embedded_runtime{system, two_workers}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_predicts_on_the_hosts_raw_buffers_with_the_jobs_preprocessing) {
  blob_job files;
  // Scaled and standardised: raw buffers must be preprocessed as the training data was.
  const std::string text = R"((
    name = "blobs_standardized",
    network = (input = (width = 4), layers = [
      (dense = (units = 16, activation = relu)), (output = (units = 3))]),
    data = (train = (csv = (path = "train.csv")), test = (csv = (path = "test.csv")),
            preprocessing = (scale = 0.5, standardize = perFeature)),
    training = (epochs = 2, batchSize = 16, seed = 7,
                updater = (learningRate = 0.1, sgd = void))))";
  auto job = runtime::parse_job_text(text, "blobs.job", files.dir.path().string());
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  embedded_runtime strom_runtime{embedded_runtime_options{1}};
  runtime::local_training_options options;
  options.checkpoint_dir = files.dir.file("ckpt");
  auto report = strom_runtime.train(*job, options);
  BOOST_REQUIRE_MESSAGE(report, (report ? "" : report.err().message));

  auto model = runtime::trained_model::load(
    files.dir.file("ckpt/blobs_standardized/run-1/epoch-0002.ckpt"));
  BOOST_REQUIRE_MESSAGE(model, (model ? "" : model.err().message));
  BOOST_TEST(model->features() == 4u);
  BOOST_TEST(model->classes() == 3u);
  BOOST_TEST(model->progress().epoch == 2u);
  // The test set's raw rows, as a host holds them.
  std::vector<float> raw;
  std::vector<std::int32_t> labels;
  std::istringstream rows{blob_csv(150, 2)};
  for (std::string row; std::getline(rows, row);) {
    std::istringstream cells{row};
    std::string cell;
    std::getline(cells, cell, ',');
    labels.push_back(std::stoi(cell));
    while (std::getline(cells, cell, ','))
      raw.push_back(std::stof(cell));
  }
  auto classes = model->classify(raw, labels.size());
  BOOST_REQUIRE_MESSAGE(classes, (classes ? "" : classes.err().message));
  std::size_t correct = 0;
  for (std::size_t i = 0; i < labels.size(); ++i)
    correct += (*classes)[i] == static_cast<std::uint32_t>(labels[i]);
  // The run's own test accuracy, on the same samples preprocessed by the run.
  BOOST_TEST(static_cast<double>(correct) / static_cast<double>(labels.size())
               == report->test_accuracy,
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(report->test_accuracy >= blob_accuracy);
  auto probabilities = model->predict(std::span{raw}.first(4), 1);
  BOOST_REQUIRE(probabilities);
  BOOST_TEST((*probabilities)[0] + (*probabilities)[1] + (*probabilities)[2] == 1.0f,
             boost::test_tools::tolerance(1e-5f));
  auto wrong = model->predict(std::span{raw}.first(5), 1);
  BOOST_REQUIRE(!wrong);
  BOOST_TEST(wrong.err().message == "predict: 5 floats for 1 samples of 4 features, expected 4");
}
