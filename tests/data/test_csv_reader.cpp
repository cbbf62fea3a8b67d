#define BOOST_TEST_MODULE data_csv_reader
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"
#include "strom/compute/data/csv_reader.hpp"

using namespace strom::compute;
using strom::test::scratch_dir;

namespace {

strom::result<dataset> read_text(const std::string& text, const csv_options& options = {}) {
  scratch_dir dir;
  return read_csv(dir.write_text("data.csv", text), options);
}

std::string error_of(const std::string& text, const csv_options& options = {}) {
  auto data = read_text(text, options);
  BOOST_REQUIRE(!data);
  return data.err().message;
}

void check_error(const std::string& message, std::initializer_list<std::string> parts) {
  for (const auto& part : parts)
    BOOST_TEST(message.find(part) != std::string::npos,
               "'" << message << "' should contain '" << part << "'");
}

} // namespace

BOOST_AUTO_TEST_CASE(reads_label_first_rows) {
  auto data = read_text("1,0.5,2\n0,-1e3,+4\n");
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->size() == 2u);
  BOOST_TEST((data->sample_shape == shape{1, 1, 2}));
  BOOST_TEST(data->classes == 2u);
  BOOST_TEST(data->labels == (std::vector<std::int32_t>{1, 0}), boost::test_tools::per_element());
  BOOST_TEST(data->features == (std::vector<float>{0.5f, 2, -1000, 4}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(unlabelled_rows_are_all_features) {
  csv_options options;
  options.labelled = false;
  auto data = read_text("1,0.5,2\n0.25,-1e3,+4\n", options);
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST((data->sample_shape == shape{1, 1, 3}));
  BOOST_TEST(data->labels.empty());
  BOOST_TEST(data->features == (std::vector<float>{1, 0.5f, 2, 0.25f, -1000, 4}),
             boost::test_tools::per_element());
  // A fractional value is a feature like any other: no column is read as a label.
  auto one_column = read_text("0.5\n", options);
  BOOST_REQUIRE_MESSAGE(one_column.ok(), strom::test::error_text(one_column));
  BOOST_TEST((one_column->sample_shape == shape{1, 1, 1}));
}

BOOST_AUTO_TEST_CASE(reads_label_in_other_column_with_header_and_delimiter) {
  csv_options options;
  options.label_column = 2;
  options.header = true;
  options.delimiter = ';';
  auto data = read_text("a;b;class\r\n 1 ; 2 ;3\r\n\r\n4;5;0\r\n", options);
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->labels == (std::vector<std::int32_t>{3, 0}), boost::test_tools::per_element());
  BOOST_TEST(data->features == (std::vector<float>{1, 2, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(data->classes == 4u);
}

BOOST_AUTO_TEST_CASE(reads_gzip_compressed_csv) {
  scratch_dir dir;
  const std::string text = "2,1.25\n";
  auto data = read_csv(dir.write_gzip("data.csv.gz", {text.begin(), text.end()}), {});
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->features.at(0) == 1.25f);
  BOOST_TEST(data->labels.at(0) == 2);
}

BOOST_AUTO_TEST_CASE(last_line_without_newline_is_read) {
  auto data = read_text("0,1\n1,2");
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->size() == 2u);
}

BOOST_AUTO_TEST_CASE(non_numeric_feature_names_line_column_and_text) {
  check_error(error_of("0,1,2\n1,abc,3\n"),
              {"data.csv", "line 2, column 2", "expected a finite number", "'abc'"});
}

BOOST_AUTO_TEST_CASE(non_finite_feature_is_rejected) {
  check_error(error_of("0,nan\n"), {"line 1, column 2", "'nan'"});
}

BOOST_AUTO_TEST_CASE(fractional_label_is_rejected) {
  check_error(error_of("0,1\n1.5,2\n"),
              {"line 2, column 1", "expected an integer label", "'1.5'"});
}

BOOST_AUTO_TEST_CASE(negative_label_is_rejected) {
  check_error(error_of("-1,1\n"), {"line 1, column 1", "label -1 is outside"});
}

BOOST_AUTO_TEST_CASE(ragged_row_is_rejected) {
  check_error(error_of("0,1,2\n1,2\n"),
              {"data.csv", "line 2 has 2 columns, expected 3 like line 1"});
}

BOOST_AUTO_TEST_CASE(empty_field_is_rejected) {
  check_error(error_of("0,1,,3\n"), {"line 1, column 3", "''"});
}

BOOST_AUTO_TEST_CASE(label_column_beyond_the_row_is_rejected) {
  csv_options options;
  options.label_column = 5;
  check_error(error_of("0,1,2\n", options), {"line 1 has 3 columns", "label column 5"});
}

BOOST_AUTO_TEST_CASE(row_without_features_is_rejected) {
  check_error(error_of("0\n1\n"), {"line 1", "only the label column"});
}

BOOST_AUTO_TEST_CASE(file_without_data_lines_is_rejected) {
  csv_options options;
  options.header = true;
  check_error(error_of("label,x\n\n", options), {"data.csv", "no data lines"});
}

BOOST_AUTO_TEST_CASE(missing_file_names_path_and_strerror) {
  scratch_dir dir;
  auto data = read_csv(dir.file("absent.csv"), {});
  BOOST_REQUIRE(!data);
  check_error(data.err().message, {"absent.csv", "cannot open", "No such file or directory"});
}

BOOST_AUTO_TEST_CASE(long_offending_text_is_cut_in_the_message) {
  const std::string junk(1000, 'x');
  const auto message = error_of("0," + junk + "\n");
  BOOST_TEST(message.size() < 200u);
  check_error(message, {"...'"});
}
