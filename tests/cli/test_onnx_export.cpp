#define BOOST_TEST_MODULE cli_onnx_export
#include <boost/test/unit_test.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "strom/compute/layers/dense_columns.hpp"
#include "strom/compute/model.hpp"
#include "strom/runtime/job/onnx_export.hpp"
#include "support/scratch_dir.hpp"
#include "support/strom_program.hpp"

// `strom export --onnx` checked by real consumers: a job is trained briefly, exported, and
// predicted by `strom predict`; tests/cli/onnx_consumers.py then runs ONNX's checker on the
// file and predicts the same samples with OpenCV's DNN module, which must agree with strom's
// classes on at least 99.9% of them. python3-onnx and python3-opencv must be installed
// (.ci/setup.sh test installs them): without them the script exits 3 and the tests fail.

namespace fs = std::filesystem;

namespace {

using strom::test::outcome;
using strom::test::run_command;

outcome run(const std::string& arguments) { return strom::test::run_strom(arguments); }

/// Debian's python3-onnx and python3-opencv are installed for Debian's own interpreter; a
/// python3 earlier on PATH (pyenv, a virtual environment) would not see them.
const std::string python = "/usr/bin/python3";
const std::string consumers = std::string{STROM_SOURCE_DIR} + "/tests/cli/onnx_consumers.py";
const std::string fashion = STROM_FASHION_MNIST_DIR;
const std::string test_images = fashion + "/t10k-images-idx3-ubyte.gz";
/// The consumers read the test images and expect an input of N x 1 x 28 x 28.
const std::string image_flags = "--idx " + test_images + " --expect-input 1,28,28";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string read_file(const fs::path& path) {
  std::ifstream in{path};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using strom::test::scratch;

/// Replaces every `from` in `text` by `to`; requires at least one.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  std::size_t count = 0;
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++count;
  }
  BOOST_REQUIRE_MESSAGE(count > 0, "'" << from << "' not found");
  return text;
}

/// An example job as it is, except that it trains on the 10,000 test images instead of the
/// 60,000 training images: one epoch of the CNN then takes seconds rather than a minute on
/// one core, and the export's agreement does not depend on how well the model learnt.
fs::path example_on_test_images(scratch& s, const std::string& example) {
  auto text = read_file(fs::path{STROM_SOURCE_DIR} / "examples" / (example + ".job"));
  text = replace_all(text, "train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz");
  text = replace_all(text, "train-labels-idx1-ubyte.gz", "t10k-labels-idx1-ubyte.gz");
  return s.write(example + ".job", text);
}

/// Trains `job` for one epoch on one worker and returns its best checkpoint.
fs::path train_briefly(scratch& s, const fs::path& job, const std::string& extra = "") {
  const auto checkpoints = s.path() / ("ckpt_" + job.stem().string());
  auto trained = run("train " + job.string() + " --epochs 1 --workers 1 --checkpoint-dir " +
                     checkpoints.string() + extra);
  BOOST_REQUIRE_MESSAGE(trained.status == 0, trained.output);
  for (const auto& entry : fs::recursive_directory_iterator(checkpoints))
    if (entry.path().filename() == "best.ckpt")
      return entry.path();
  BOOST_FAIL("no best.ckpt under " << checkpoints << ": " << trained.output);
  return {};
}

/// Exports `checkpoint` as NAME.onnx, predicts `samples` with strom, and has the consumers
/// check the file against those predictions; `consumer_flags` say how to read the samples
/// and what input shape the graph must declare. Returns the consumers' report.
std::string export_and_compare(scratch& s, const std::string& name, const fs::path& checkpoint,
                               const std::string& samples, const std::string& consumer_flags) {
  const auto model = s.path() / (name + ".onnx");
  auto exported = run("export " + checkpoint.string() + " --onnx " + model.string());
  BOOST_REQUIRE_MESSAGE(exported.status == 0, exported.output);
  BOOST_TEST(contains(exported.output, "ONNX opset 13"), exported.output);
  BOOST_TEST(fs::exists(model));
  BOOST_TEST(!fs::exists(model.string() + ".partial"));

  const auto predictions = s.path() / (name + ".csv");
  auto predicted = run("predict " + checkpoint.string() + " --data " + samples + " --out " +
                       predictions.string());
  BOOST_REQUIRE_MESSAGE(predicted.status == 0, predicted.output);

  auto checked = run_command(python + " " + consumers + " " + model.string() + " --predictions " +
                             predictions.string() + " " + consumer_flags);
  BOOST_TEST_MESSAGE(name << ": " << checked.output);
  BOOST_REQUIRE_MESSAGE(checked.status != 3, "ONNX's checker or OpenCV is not installed for "
                                               << python << " (python3-onnx, python3-opencv): "
                                               << checked.output);
  BOOST_REQUIRE_MESSAGE(checked.status == 0, checked.output);
  BOOST_TEST(contains(checked.output, "checker: ok"), checked.output);
  return checked.output;
}

} // namespace

BOOST_AUTO_TEST_CASE(fashion_mlp_exported_predicts_in_opencv_as_in_strom) {
  scratch s;
  const auto checkpoint = train_briefly(s, example_on_test_images(s, "fashion_mlp"));
  const auto report = export_and_compare(s, "fashion_mlp", checkpoint, test_images, image_flags);
  BOOST_TEST(contains(report, "nodes Mul Flatten Gemm Relu Gemm Relu Gemm Softmax"), report);
}

BOOST_AUTO_TEST_CASE(fashion_cnn_exported_predicts_in_opencv_as_in_strom) {
  scratch s;
  const auto checkpoint = train_briefly(s, example_on_test_images(s, "fashion_cnn"));
  const auto report = export_and_compare(s, "fashion_cnn", checkpoint, test_images, image_flags);
  // Dropout is the identity at inference and has no node.
  BOOST_TEST(contains(report, "nodes Mul Conv Relu MaxPool Conv Relu MaxPool Flatten Gemm Relu "
                              "Gemm Softmax"),
             report);
}

BOOST_AUTO_TEST_CASE(batch_norm_padded_pooling_and_every_activation_export_with_standardisation) {
  scratch s;
  const auto job = s.write("mixed.job", R"((name = "mixed",
    network = (input = (channels = 1, height = 28, width = 28), weightInit = he, layers = [
      (convolution = (filters = 8, kernel = 3, padding = 1)),
      (batchNormalization = ()),
      (leakyRelu = (alpha = 0.1)),
      (averagePooling = (kernel = 3, stride = 2, padding = 1)),
      (convolution = (filters = 8, kernel = 3, stride = 2, activation = tanh)),
      (maxPooling = (kernel = 2, padding = 1)),
      (dense = (units = 32)),
      (batchNormalization = ()),
      (sigmoid = void),
      (dropout = (rate = 0.2)),
      (dense = (units = 16, activation = leakyRelu)),
      (relu = void),
      (output = (units = 10))]),
    data = (
      train = (idx = (images = ")" + test_images + R"(",
                      labels = ")" + fashion + R"(/t10k-labels-idx1-ubyte.gz")),
      test = (idx = (images = ")" + test_images + R"(",
                     labels = ")" + fashion + R"(/t10k-labels-idx1-ubyte.gz")),
      preprocessing = (scale = 0.00392156862745098, standardize = perFeature)),
    training = (batchSize = 64, updater = (learningRate = 0.003, adam = ()))))");
  const auto checkpoint = train_briefly(s, job);
  const auto report = export_and_compare(s, "mixed", checkpoint, test_images, image_flags);
  // Scale, then standardisation with per-pixel statistics; average pooling's zero padding
  // as a Pad of its own (OpenCV 4.6 ignores count_include_pad).
  BOOST_TEST(contains(report, "nodes Mul Sub Mul Conv BatchNormalization LeakyRelu Pad "
                              "AveragePool Conv Tanh MaxPool Flatten Gemm BatchNormalization "
                              "Sigmoid Gemm LeakyRelu Relu Gemm Softmax"),
             report);
}

BOOST_AUTO_TEST_CASE(vector_inputs_export_as_n_by_f_with_global_standardisation) {
  scratch s;
  // 300 rows of 6 features on different scales, 3 classes that depend on them.
  std::string rows;
  for (int i = 0; i < 300; ++i) {
    std::array<double, 6> x{};
    for (int f = 0; f < 6; ++f)
      x[f] = std::sin(0.37 * i * (f + 1) + f) * (1 + 3 * f) + f;
    const int label = (x[0] + x[1] > 2.0) + (x[3] > 9.0);
    rows += std::to_string(label);
    for (const double v : x) {
      rows += ',';
      rows += std::to_string(v);
    }
    rows += '\n';
  }
  const auto csv = s.write("rows.csv", rows);
  // Batch normalisation straight on the input: strom normalises its one channel over all six
  // features, so the export reshapes N x 6 to N x 1 x 1 x 6 for it.
  const auto job = s.write("vector.job", R"((name = "vector",
    network = (input = (width = 6), layers = [
      (batchNormalization = ()),
      (dense = (units = 16)), (batchNormalization = ()), (tanh = void),
      (dense = (units = 8, activation = sigmoid)),
      (output = (units = 3))]),
    data = (train = (csv = (path = ")" + csv.string() + R"(")),
            test = (csv = (path = ")" + csv.string() + R"(")),
            preprocessing = (scale = 0.5, standardize = global)),
    training = (batchSize = 16, updater = (learningRate = 0.01, adam = ()))))");
  const auto checkpoint = train_briefly(s, job);
  const auto report = export_and_compare(s, "vector", checkpoint, csv.string(),
                                         "--csv " + csv.string() +
                                           " --label-column 0 --expect-input 6");
  BOOST_TEST(contains(report, "input ['N', 6], output ['N', 3]"), report);
  BOOST_TEST(contains(report, "nodes Mul Sub Mul Reshape BatchNormalization Flatten Gemm "
                              "BatchNormalization Tanh Gemm Sigmoid Gemm Softmax"),
             report);
}

BOOST_AUTO_TEST_CASE(a_layer_without_an_onnx_form_is_refused_naming_it) {
  // Every layer a job file can name has an ONNX form; a pipeline's block of a dense layer's
  // columns (compute/layers/dense_columns.hpp) has none.
  std::vector<std::unique_ptr<strom::compute::layer>> layers;
  layers.push_back(std::make_unique<strom::compute::dense_columns>(
    4, 3, 0, 3, strom::compute::weight_init::xavier));
  strom::compute::model net{{1, 1, 4}, std::move(layers), 3};
  auto exported = strom::runtime::to_onnx(net, strom::runtime::job_preprocessing{}, "blocks");
  BOOST_REQUIRE(!exported);
  BOOST_TEST(contains(exported.err().message, "layer 0 of the network (dense_columns) has no "
                                              "ONNX form"),
             exported.err().message);
}

BOOST_AUTO_TEST_CASE(an_absent_or_damaged_checkpoint_and_a_missing_flag_are_refused) {
  scratch s;
  const auto model = s.path() / "model.onnx";
  auto absent = run("export " + (s.path() / "none.ckpt").string() + " --onnx " + model.string());
  BOOST_TEST(absent.status == 1);
  BOOST_TEST(contains(absent.output, "strom export: " + (s.path() / "none.ckpt").string()),
             absent.output);
  const auto damaged = s.write("damaged.ckpt", "not a checkpoint");
  auto refused = run("export " + damaged.string() + " --onnx " + model.string());
  BOOST_TEST(refused.status == 1);
  BOOST_TEST(contains(refused.output, damaged.string()), refused.output);
  BOOST_TEST(!fs::exists(model));

  auto no_flag = run("export " + damaged.string());
  BOOST_TEST(no_flag.status == 2);
  BOOST_TEST(contains(no_flag.output, "--onnx FILE is required"), no_flag.output);
  BOOST_TEST(run("export").status == 2);
  auto help = run("export --help");
  BOOST_TEST(help.status == 0);
  BOOST_TEST(contains(help.output, "--onnx FILE"), help.output);
  BOOST_TEST(contains(run("--help").output, "export CKPT"));
}
