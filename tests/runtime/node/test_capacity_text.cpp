#define BOOST_TEST_MODULE runtime_capacity_text
#include <boost/test/unit_test.hpp>

#include <string>

#include "strom/runtime/node/capacity_text.hpp"

using namespace strom;
using namespace strom::runtime;

namespace {

template <class T>
bool says(const result<T>& r, const std::string& part) {
  return !r.ok() && r.err().message.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_CASE(byte_counts_take_binary_and_decimal_units) {
  BOOST_TEST(*parse_byte_count("4096", "--memory-limit") == 4096u);
  BOOST_TEST(*parse_byte_count("512B", "--memory-limit") == 512u);
  BOOST_TEST(*parse_byte_count("7MiB", "--memory-limit") == 7u * 1024u * 1024u);
  BOOST_TEST(*parse_byte_count("7M", "--memory-limit") == 7u * 1024u * 1024u);
  BOOST_TEST(*parse_byte_count("3K", "--memory-limit") == 3u * 1024u);
  BOOST_TEST(*parse_byte_count("2G", "--memory-limit") == 2ull << 30);
  BOOST_TEST(*parse_byte_count("1T", "--memory-limit") == 1ull << 40);
  BOOST_TEST(*parse_byte_count("5MB", "--memory-limit") == 5'000'000u);
  BOOST_TEST(*parse_byte_count("8kB", "--memory-limit") == 8'000u);
}

BOOST_AUTO_TEST_CASE(a_bad_byte_count_is_refused_naming_the_flag_and_text) {
  for (const char* text : {"", "MiB", "7X", "-1", "7 MiB", "1.5G", "7mib"}) {
    auto bytes = parse_byte_count(text, "--memory-limit");
    BOOST_REQUIRE(!bytes.ok());
    BOOST_TEST(bytes.err().message.find(std::string("--memory-limit: '") + text + "'") == 0u,
               bytes.err().message);
  }
  auto zero = parse_byte_count("0G", "--memory-limit");
  BOOST_TEST((!zero.ok() && zero.err().message.find("no memory at all") != std::string::npos));
  auto huge = parse_byte_count("20000000000T", "--memory-limit");
  BOOST_TEST((!huge.ok() && huge.err().message.find("64 bits") != std::string::npos));
  auto digits = parse_byte_count("99999999999999999999999", "--memory-limit");
  BOOST_TEST((!digits.ok() && digits.err().message.find("64 bits") != std::string::npos));
}

BOOST_AUTO_TEST_CASE(speed_factors_lie_in_zero_to_one) {
  BOOST_TEST(*parse_speed_factor("0.5", "--speed-factor") == 0.5);
  BOOST_TEST(*parse_speed_factor("1", "--speed-factor") == 1.0);
  BOOST_TEST(says(parse_speed_factor("2", "--speed-factor"),
                  "--speed-factor: 2 is above 1: a node cannot be made faster by waiting"));
  BOOST_TEST(says(parse_speed_factor("0", "--speed-factor"), "0 is not positive"));
  BOOST_TEST(says(parse_speed_factor("-0.5", "--speed-factor"), "-0.5 is not positive"));
  BOOST_TEST(says(parse_speed_factor("fast", "--speed-factor"), "'fast' is not a number"));
  BOOST_TEST(says(parse_speed_factor("0.5x", "--speed-factor"), "'0.5x' is not a number"));
  BOOST_TEST(says(parse_speed_factor("nan", "--speed-factor"), "'nan' is not a number"));
}

BOOST_AUTO_TEST_CASE(node_speeds_give_one_factor_per_node) {
  auto speeds = parse_node_speeds("1,0.5", 2, "--node-speeds");
  BOOST_REQUIRE(speeds.ok());
  BOOST_TEST((*speeds == std::vector<double>{1.0, 0.5}));
  auto short_list = parse_node_speeds("1,0.5", 3, "--node-speeds");
  BOOST_REQUIRE(!short_list.ok());
  BOOST_TEST(short_list.err().message == "--node-speeds: '1,0.5' gives 2 speed factors for 3 nodes");
  auto empty_item = parse_node_speeds("1,,1", 3, "--node-speeds");
  BOOST_REQUIRE(!empty_item.ok());
  BOOST_TEST(empty_item.err().message == "--node-speeds: '' is not a number");
  auto fast = parse_node_speeds("1,1.5", 2, "--node-speeds");
  BOOST_REQUIRE(!fast.ok());
  BOOST_TEST(fast.err().message.find("1.5 is above 1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_speed_drift_gives_a_factor_from_a_one_based_epoch_on) {
  auto drift = parse_speed_drift("0.3@2", "--speed-drift");
  BOOST_REQUIRE(drift.ok());
  BOOST_TEST(drift->factor == 0.3);
  BOOST_TEST(drift->epoch == 1u);  // kept 0-based
  BOOST_TEST(says(parse_speed_drift("0.3", "--speed-drift"), "'0.3' is not F@EPOCH"));
  BOOST_TEST(says(parse_speed_drift("0.3@0", "--speed-drift"), "'0' is no epoch"));
  BOOST_TEST(says(parse_speed_drift("0.3@x", "--speed-drift"), "'x' is no epoch"));
  BOOST_TEST(says(parse_speed_drift("2@3", "--speed-drift"), "2 is above 1"));
  auto drifts = parse_node_drifts("2=0.5@3,1=0.25@1", 2, "--speed-drift");
  BOOST_REQUIRE(drifts.ok());
  BOOST_REQUIRE_EQUAL(drifts->size(), 2u);
  BOOST_TEST((*drifts)[0].first == 1u);
  BOOST_TEST((*drifts)[0].second.factor == 0.5);
  BOOST_TEST((*drifts)[0].second.epoch == 2u);
  BOOST_TEST((*drifts)[1].first == 0u);
  BOOST_TEST(says(parse_node_drifts("3=0.5@1", 2, "--speed-drift"), "'3' is no node of 1 to 2"));
  BOOST_TEST(says(parse_node_drifts("0.5@1", 2, "--speed-drift"), "'0.5@1' is not NODE=F@EPOCH"));
  BOOST_TEST(says(parse_node_drifts("1=0.5@1,1=0.4@2", 2, "--speed-drift"),
                  "node 1 drifts twice"));
}
