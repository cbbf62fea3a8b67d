#define BOOST_TEST_MODULE frames_frame_inspect
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "frame_samples.hpp"
#include "strom/compute/frames/frame_file.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/runtime/frame_inspect.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

struct captured {
  int status;
  std::string out;
  std::string err;
};

std::string drain(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  while (const std::size_t got = std::fread(buffer, 1, sizeof buffer, file))
    text.append(buffer, got);
  std::fclose(file);
  return text;
}

captured inspect(const std::string& path) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  BOOST_TEST_REQUIRE((out != nullptr && err != nullptr));
  const int status = runtime::inspect_frame_file(path, out, err);
  return {status, drain(out), drain(err)};
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("strom_test_inspect_") + std::to_string(::getpid()) + "_" + name))
      .string();
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_CASE(good_frame_prints_header_and_payload_statistics) {
  // 1000 elements, every 10th +/-1: 100 values reach the 0.5 threshold.
  const auto sample = test::encode_sample(encoding::threshold, test::sparse_values(1000, 10));
  auto f = build_update_frame({.origin_node = 42, .worker = 3, .sequence = 9, .iteration = 77,
                               .epoch = 2, .offset = 128},
                              sample.update);
  BOOST_TEST_REQUIRE(f.ok());
  const auto path = temp_path("good");
  BOOST_TEST_REQUIRE(write_frame_file(path, *f).ok());
  const auto result = inspect(path);
  std::filesystem::remove(path);
  BOOST_TEST_MESSAGE(result.out);
  BOOST_TEST(result.status == 0);
  BOOST_TEST(result.err.empty());
  BOOST_TEST(has(result.out, "origin node      42\n"));
  BOOST_TEST(has(result.out, "worker           3\n"));
  BOOST_TEST(has(result.out, "sequence         9\n"));
  BOOST_TEST(has(result.out, "iteration        77\n"));
  BOOST_TEST(has(result.out, "epoch            2\n"));
  BOOST_TEST(has(result.out, "encoding         threshold\n"));
  BOOST_TEST(has(result.out, "threshold        0.5\n"));
  BOOST_TEST(has(result.out, "offset           128\n"));
  BOOST_TEST(has(result.out, "elements         1000\n"));
  BOOST_TEST(has(result.out, "values           100 (density 0.1)\n"));
  BOOST_TEST(has(result.out, "payload bytes    400 raw, 400 stored\n"));
  BOOST_TEST(has(result.out, "frame bytes      " + std::to_string(f->size()) + "\n"));
}

BOOST_AUTO_TEST_CASE(malformed_frame_is_refused_naming_file_and_problem) {
  const auto path = temp_path("bad");
  std::FILE* file = std::fopen(path.c_str(), "wb");
  BOOST_TEST_REQUIRE(file != nullptr);
  const char garbage[12] = "not a frame";
  std::fwrite(garbage, 1, sizeof garbage, file);
  std::fclose(file);
  const auto result = inspect(path);
  std::filesystem::remove(path);
  BOOST_TEST(result.status != 0);
  BOOST_TEST(result.out.empty());
  BOOST_TEST(has(result.err, path));
  BOOST_TEST(has(result.err, "not a multiple of 8"));
}

BOOST_AUTO_TEST_CASE(frame_with_invalid_payload_is_refused) {
  const std::int32_t indices[] = {5, 2000};  // 2000 lies outside a 1000-element slice
  const auto words = test::forge_frame_words([&](auto b) {
    test::fill_honest(b, encoding::threshold, 0.5f, 1000,
                      std::as_bytes(std::span<const std::int32_t>(indices)));
  });
  auto f = frame::from_bytes(test::bytes_of(words));
  BOOST_TEST_REQUIRE(f.ok());
  const auto path = temp_path("bad_payload");
  BOOST_TEST_REQUIRE(write_frame_file(path, *f).ok());
  const auto result = inspect(path);
  std::filesystem::remove(path);
  BOOST_TEST(result.status != 0);
  BOOST_TEST(has(result.err, path));
  BOOST_TEST(has(result.err, "index 2000"));
}

BOOST_AUTO_TEST_CASE(missing_file_is_refused) {
  const auto result = inspect(temp_path("missing"));
  BOOST_TEST(result.status != 0);
  BOOST_TEST(has(result.err, "cannot read"));
}
