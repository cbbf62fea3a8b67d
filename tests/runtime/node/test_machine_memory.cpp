#define BOOST_TEST_MODULE runtime_machine_memory
#include <boost/test/unit_test.hpp>

#include <cstdlib>

#include "strom/runtime/node/machine_memory.hpp"

using namespace strom;
using namespace strom::runtime;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Sets STROM_MEMORY_LIMIT_BYTES for one test and removes it afterwards.
struct memory_limit {
  explicit memory_limit(const char* bytes) { ::setenv(memory_limit_variable, bytes, 1); }
  ~memory_limit() { ::unsetenv(memory_limit_variable); }
};

job_spec parsed(const std::string& text) {
  auto job = parse_job_text(text, "mem.job", "/data");
  BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
  return std::move(job).value();
}

// 784 -> 40000 -> 40000 -> 10 with Adam: about 26 GB a worker.
const std::string two_wide_layers_job = R"((network = (input = (height = 28, width = 28), layers = [
    (dense = (units = 40000)), (dense = (units = 40000)), (output = (units = 10))]),
    training = (updater = (adam = ()))))";

} // namespace

BOOST_AUTO_TEST_CASE(mem_available_is_read_in_kib) {
  const auto bytes = mem_available_bytes("MemTotal:       32000000 kB\nMemFree:  100 kB\n"
                                         "MemAvailable:   22065864 kB\nBuffers: 1 kB\n");
  BOOST_REQUIRE(bytes.has_value());
  BOOST_TEST(*bytes == 22065864ull * 1024ull);
  BOOST_TEST(!mem_available_bytes("MemTotal: 5 kB\n").has_value());
}

BOOST_AUTO_TEST_CASE(this_machine_reports_some_memory) {
  auto available = read_available_memory();
  BOOST_REQUIRE(available.ok());
  BOOST_REQUIRE(available->has_value());  // Linux: /proc/meminfo at least
  BOOST_TEST((*available)->bytes > 0u);
  BOOST_TEST(!(*available)->source.empty());
}

BOOST_AUTO_TEST_CASE(the_variable_replaces_the_machines_figure) {
  memory_limit limit{"123456789"};
  auto available = read_available_memory();
  BOOST_REQUIRE(available.ok());
  BOOST_REQUIRE(available->has_value());
  BOOST_TEST((*available)->bytes == 123456789u);
  BOOST_TEST((*available)->source == memory_limit_variable);
}

BOOST_AUTO_TEST_CASE(a_malformed_variable_is_an_error_naming_it) {
  memory_limit limit{"12 GB"};
  auto available = read_available_memory();
  BOOST_REQUIRE(!available.ok());
  BOOST_TEST(contains(available.err().message, "STROM_MEMORY_LIMIT_BYTES: '12 GB'"),
             available.err().message);
}

BOOST_AUTO_TEST_CASE(a_job_larger_than_the_memory_is_refused_saying_what_it_needs_and_what_there_is) {
  memory_limit limit{"3100000000"};
  auto checked = check_job_memory(parsed(two_wide_layers_job), 1, false);
  BOOST_REQUIRE(!checked.ok());
  const auto& message = checked.err().message;
  BOOST_TEST(contains(message, "mem.job: the model needs about 26.1 GB (parameters 6.5 GB"), message);
  BOOST_TEST(contains(message, "but this machine has 3.1 GB available (STROM_MEMORY_LIMIT_BYTES)"),
             message);
}

BOOST_AUTO_TEST_CASE(workers_on_the_node_multiply_what_is_needed) {
  const std::string small = R"((network = (input = (width = 1000), layers = [
      (dense = (units = 1000)), (output = (units = 10))])))";
  memory_limit limit{"20000000"};  // 20 MB: one worker (about 8 MB) fits, four do not
  BOOST_TEST(check_job_memory(parsed(small), 1, false).ok());
  auto four = check_job_memory(parsed(small), 4, true);
  BOOST_REQUIRE(!four.ok());
  BOOST_TEST(contains(four.err().message, "for 4 workers"), four.err().message);
  BOOST_TEST(contains(four.err().message, "sharing residual"), four.err().message);
}
