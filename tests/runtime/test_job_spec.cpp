#define BOOST_TEST_MODULE runtime_job_spec
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "strom/runtime/job_spec.hpp"

using namespace strom;
using namespace strom::runtime;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string parse_error(const std::string& text) {
  auto job = parse_job_text(text, "bad.job", "/data");
  BOOST_REQUIRE(!job.ok());
  return job.err().message;
}

} // namespace

BOOST_AUTO_TEST_CASE(example_jobs_parse) {
  for (const char* name : {"fashion_mlp.job", "fashion_cnn.job"}) {
    auto job = load_job_file(std::string{STROM_SOURCE_DIR} + "/examples/" + name);
    BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
    BOOST_TEST(job->reader().getTraining().getBatchSize() == 64u);
    BOOST_TEST(job->reader().getNetwork().getLayers().size() >= 3u);
  }
}

BOOST_AUTO_TEST_CASE(unknown_field_is_reported_with_line_and_column) {
  auto message = parse_error("(\n  name = \"x\",\n  trainin = (epochs = 2)\n)");
  BOOST_TEST(contains(message, "bad.job:3:3:"), message);
  BOOST_TEST(contains(message, "trainin"), message);
}

BOOST_AUTO_TEST_CASE(misspelled_enum_value_lists_the_valid_ones) {
  auto message = parse_error(
    "(network = (layers = [(dense = (units = 5, activation = rlu))]))");
  BOOST_TEST(contains(message, "'rlu'"), message);
  BOOST_TEST(contains(message, "activation"), message);
  BOOST_TEST(contains(message, "relu"), message);
  BOOST_TEST(contains(message, "bad.job:1:"), message);
}

BOOST_AUTO_TEST_CASE(out_of_range_number_is_reported) {
  auto message = parse_error("(training = (epochs = -3))");
  BOOST_TEST(contains(message, "bad.job:1:"), message);
  BOOST_TEST(contains(message, "out of range"), message);
}

BOOST_AUTO_TEST_CASE(unterminated_text_is_a_parse_error) {
  BOOST_TEST(contains(parse_error("(training = (epochs = 3)"), "bad.job:1:"));
}

BOOST_AUTO_TEST_CASE(relative_data_paths_resolve_against_the_job_folder) {
  auto job = parse_job_text(
    R"((data = (train = (idx = (images = "imgs.gz", labels = "/abs/labels.gz")))))", "j.job",
    "/data/sets");
  BOOST_REQUIRE(job.ok());
  auto idx = job->reader().getData().getTrain().getIdx();
  BOOST_TEST(std::string{idx.getImages().cStr()} == "/data/sets/imgs.gz");
  BOOST_TEST(std::string{idx.getLabels().cStr()} == "/abs/labels.gz");
}

BOOST_AUTO_TEST_CASE(missing_file_names_the_path) {
  auto job = load_job_file("/nonexistent/x.job");
  BOOST_REQUIRE(!job.ok());
  BOOST_TEST(contains(job.err().message, "/nonexistent/x.job"));
}

BOOST_AUTO_TEST_CASE(binary_file_is_refused) {
  auto path = std::filesystem::temp_directory_path() / "strom_binary.job";
  {
    std::ofstream out{path, std::ios::binary};
    out.write("(\0\0\0", 4);
  }
  auto job = load_job_file(path.string());
  BOOST_REQUIRE(!job.ok());
  BOOST_TEST(contains(job.err().message, "NUL byte"), job.err().message);
  std::filesystem::remove(path);
}
