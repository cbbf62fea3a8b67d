#define BOOST_TEST_MODULE data_dataset_from_spec
#include <boost/test/unit_test.hpp>

#include <capnp/message.h>

#include <cmath>

#include "fixtures.hpp"
#include "strom/compute/data/dataset_from_spec.hpp"

using namespace strom::compute;
using strom::test::idx_ubyte;
using strom::test::scratch_dir;
namespace schema = strom::schema;

namespace {

/// A job folder holding a 4-sample training set and a 2-sample test set of 1x2x2 images.
struct job_folder {
  scratch_dir dir;
  capnp::MallocMessageBuilder message;
  schema::DataSpec::Builder spec = message.initRoot<schema::DataSpec>();

  job_folder() {
    dir.write("train-images.idx", idx_ubyte({4, 2, 2}, {0, 2, 4, 6, 2, 4, 6, 8, 4, 6, 8, 10,
                                                        6, 8, 10, 12}));
    dir.write_gzip("train-labels.idx.gz", idx_ubyte({4}, {0, 1, 2, 1}));
    dir.write("test-images.idx", idx_ubyte({2, 2, 2}, {3, 5, 7, 9, 1, 1, 1, 1}));
    dir.write("test-labels.idx", idx_ubyte({2}, {3, 0}));
    auto train = spec.initTrain().initIdx();
    train.setImages("train-images.idx");
    train.setLabels("train-labels.idx.gz");
  }

  void add_test() {
    auto test = spec.initTest().initIdx();
    test.setImages(dir.file("test-images.idx"));  // absolute path
    test.setLabels("test-labels.idx");
  }

  strom::result<training_data> load() { return load_data(spec.asReader(), dir.path().string()); }
};

std::string error_of(job_folder& job) {
  auto data = job.load();
  BOOST_REQUIRE(!data);
  return data.err().message;
}

} // namespace

BOOST_AUTO_TEST_CASE(loads_relative_and_absolute_idx_paths) {
  job_folder job;
  job.add_test();
  auto data = job.load();
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->train.size() == 4u);
  BOOST_TEST(data->test.size() == 2u);
  BOOST_TEST((data->train.sample_shape == shape{1, 2, 2}));
  BOOST_TEST(data->train.features.at(1) == 2.0f);
}

BOOST_AUTO_TEST_CASE(both_sets_get_the_larger_class_count) {
  job_folder job;
  job.add_test();
  auto data = job.load();
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->train.classes == 4u);  // test has label 3, train only up to 2
  BOOST_TEST(data->test.classes == 4u);
}

BOOST_AUTO_TEST_CASE(missing_test_source_gives_an_empty_test_set) {
  job_folder job;
  auto data = job.load();
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->test.size() == 0u);
  BOOST_TEST((data->test.sample_shape == data->train.sample_shape));
}

BOOST_AUTO_TEST_CASE(scale_then_standardize_with_training_statistics) {
  job_folder job;
  job.add_test();
  job.spec.initPreprocessing().setScale(0.5f);
  job.spec.getPreprocessing().setStandardize(schema::Standardize::GLOBAL);
  auto data = job.load();
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  // Scaled train features: 0..6 with mean 3; the values 0,1,2,3, 1,2,3,4, 2,3,4,5, 3,4,5,6
  // have population variance 2.5.
  const float stddev = std::sqrt(2.5f);
  BOOST_TEST(data->train.features.at(0) == -3.0f / stddev, boost::test_tools::tolerance(1e-5f));
  // Test image 0 pixel 0 is 3 -> 1.5 after scaling -> (1.5 - 3) / stddev with train's stats.
  BOOST_TEST(data->test.features.at(0) == -1.5f / stddev, boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(per_feature_standardization_is_fitted_on_train) {
  job_folder job;
  job.add_test();
  job.spec.initPreprocessing().setStandardize(schema::Standardize::PER_FEATURE);
  auto data = job.load();
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  // Train feature 0 is 0, 2, 4, 6: mean 3, stddev sqrt(5); test's 3 maps to 0.
  BOOST_TEST(data->train.features.at(0) == -3.0f / std::sqrt(5.0f),
             boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(data->test.features.at(0) == 0.0f, boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(missing_image_file_error_names_the_field_and_path) {
  job_folder job;
  job.spec.getTrain().getIdx().setImages("nowhere/x.idx.gz");
  const auto message = error_of(job);
  const auto expected = "data.train.idx.images: " + job.dir.file("nowhere/x.idx.gz")
                        + ": cannot open: No such file or directory";
  BOOST_TEST(message == expected);
}

BOOST_AUTO_TEST_CASE(corrupt_label_file_error_names_the_labels_field) {
  job_folder job;
  job.dir.write("bad-labels.idx", {0, 0, 8, 9});
  job.spec.getTrain().getIdx().setLabels("bad-labels.idx");
  const auto message = error_of(job);
  BOOST_TEST(message.rfind("data.train.idx.labels: ", 0) == 0u, message);
  BOOST_TEST(message.find("found 9") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(count_mismatch_error_names_the_source) {
  job_folder job;
  job.spec.getTrain().getIdx().setLabels("test-labels.idx");
  const auto message = error_of(job);
  BOOST_TEST(message.rfind("data.train.idx: ", 0) == 0u, message);
  BOOST_TEST(message.find("4 images") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(missing_train_source_is_rejected) {
  job_folder job;
  job.spec.initTrain();
  BOOST_TEST(error_of(job) == "data.train: expected an idx or csv source, found none");
}

BOOST_AUTO_TEST_CASE(empty_path_is_rejected) {
  job_folder job;
  job.spec.getTrain().getIdx().setImages("");
  BOOST_TEST(error_of(job).rfind("data.train.idx.images: expected a file path", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(loads_csv_with_its_options) {
  job_folder job;
  job.dir.write_text("train.csv", "a|b|label\n1|2|0\n3|4|1\n");
  auto csv = job.spec.initTrain().initCsv();
  csv.setPath("train.csv");
  csv.setLabelColumn(2);
  csv.setHeader(true);
  csv.setDelimiter("|");
  auto data = job.load();
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST((data->train.sample_shape == shape{1, 1, 2}));
  BOOST_TEST(data->train.classes == 2u);
}

BOOST_AUTO_TEST_CASE(csv_errors_name_the_path_field) {
  job_folder job;
  job.dir.write_text("train.csv", "0,1\n1\n");
  job.spec.initTrain().initCsv().setPath("train.csv");
  const auto message = error_of(job);
  BOOST_TEST(message.rfind("data.train.csv.path: ", 0) == 0u, message);
  BOOST_TEST(message.find("line 2") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(multi_character_delimiter_is_rejected) {
  job_folder job;
  auto csv = job.spec.initTrain().initCsv();
  csv.setPath("train.csv");
  csv.setDelimiter(";;");
  BOOST_TEST(error_of(job) == "data.train.csv.delimiter: expected one character, found ';;'");
}

BOOST_AUTO_TEST_CASE(test_with_another_sample_shape_is_rejected) {
  job_folder job;
  job.dir.write_text("test.csv", "0,1,2,3,4\n");
  job.spec.initTest().initCsv().setPath("test.csv");
  BOOST_TEST(error_of(job) == "data.test: sample shape 1x1x4 differs from data.train's 1x2x2");
}

BOOST_AUTO_TEST_CASE(non_finite_or_zero_scale_is_rejected) {
  job_folder job;
  job.spec.initPreprocessing().setScale(0.0f);
  BOOST_TEST(error_of(job).rfind("data.preprocessing.scale: ", 0) == 0u);
}
