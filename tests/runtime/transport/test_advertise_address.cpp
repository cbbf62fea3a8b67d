#define BOOST_TEST_MODULE runtime_advertise_address
#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "strom/runtime/transport/advertise_address.hpp"

using namespace strom::runtime;

namespace {

const std::vector<interface_address> two_interfaces{{"lo", "127.0.0.1"}, {"eth0", "10.1.2.3"}};

ipv4_network network(std::string_view cidr) {
  auto parsed = parse_cidr(cidr);
  BOOST_REQUIRE(parsed);
  return *parsed;
}

} // namespace

BOOST_AUTO_TEST_CASE(cidr_parses_address_and_prefix) {
  const auto parsed = network("10.0.0.0/8");
  BOOST_TEST(parsed.address == 0x0a000000u);
  BOOST_TEST(parsed.prefix_length == 8u);
  BOOST_TEST(to_string(parsed) == "10.0.0.0/8");
}

BOOST_AUTO_TEST_CASE(cidr_without_prefix_is_rejected_naming_it) {
  auto parsed = parse_cidr("10.0.0.0");
  BOOST_REQUIRE(!parsed);
  BOOST_TEST(parsed.err().message == "'10.0.0.0': expected an IPv4 network as A.B.C.D/N");
}

BOOST_AUTO_TEST_CASE(cidr_prefix_above_32_is_rejected) {
  for (const char* text : {"10.0.0.0/33", "10.0.0.0/", "10.0.0.0/x", "10.0.0.0/-1"}) {
    auto parsed = parse_cidr(text);
    BOOST_REQUIRE(!parsed);
    // fmt rather than "'" + std::string{...}: g++ 12 warns -Wrestrict on that (GCC bug 105329).
    BOOST_TEST(parsed.err().message == fmt::format("'{}': prefix length must be 0..32", text));
  }
}

BOOST_AUTO_TEST_CASE(cidr_with_a_bad_address_is_rejected) {
  auto parsed = parse_cidr("10.0.0.256/8");
  BOOST_REQUIRE(!parsed);
  BOOST_TEST(parsed.err().message ==
             "'10.0.0.256/8': '10.0.0.256' is not a dotted-quad IPv4 address");
}

BOOST_AUTO_TEST_CASE(cidr_with_host_bits_set_is_rejected_with_a_suggestion) {
  auto parsed = parse_cidr("10.1.2.3/8");
  BOOST_REQUIRE(!parsed);
  BOOST_TEST(parsed.err().message ==
             "'10.1.2.3/8': address has bits set outside the /8 prefix (did you mean 10.0.0.0/8?)");
}

BOOST_AUTO_TEST_CASE(contains_checks_the_prefix_bits_only) {
  const auto net = network("192.168.4.0/22");
  BOOST_TEST(contains(net, *parse_ipv4("192.168.4.0")));
  BOOST_TEST(contains(net, *parse_ipv4("192.168.7.255")));
  BOOST_TEST(!contains(net, *parse_ipv4("192.168.8.0")));
  BOOST_TEST(!contains(net, *parse_ipv4("192.168.3.255")));
}

BOOST_AUTO_TEST_CASE(prefix_zero_contains_everything_and_32_one_address) {
  BOOST_TEST(contains(network("0.0.0.0/0"), *parse_ipv4("203.0.113.9")));
  BOOST_TEST(contains(network("203.0.113.9/32"), *parse_ipv4("203.0.113.9")));
  BOOST_TEST(!contains(network("203.0.113.9/32"), *parse_ipv4("203.0.113.8")));
}

BOOST_AUTO_TEST_CASE(first_address_in_picks_the_matching_interface) {
  auto chosen = first_address_in(network("10.0.0.0/8"), two_interfaces);
  BOOST_REQUIRE(chosen);
  BOOST_TEST(*chosen == "10.1.2.3");
}

BOOST_AUTO_TEST_CASE(no_matching_interface_lists_the_interfaces_seen) {
  auto chosen = first_address_in(network("192.168.0.0/16"), two_interfaces);
  BOOST_REQUIRE(!chosen);
  BOOST_TEST(chosen.err().message ==
             "--netmask 192.168.0.0/16: no local interface has an IPv4 address in it "
             "(interfaces seen: lo 127.0.0.1, eth0 10.1.2.3)");
}

BOOST_AUTO_TEST_CASE(loopback_network_finds_the_loopback_interface) {
  advertise_options options;
  options.netmask = "127.0.0.0/8";
  auto chosen = choose_advertise_address(options, "");
  BOOST_REQUIRE_MESSAGE(chosen, (chosen ? "" : chosen.err().message));
  BOOST_TEST(contains(network("127.0.0.0/8"), *parse_ipv4(*chosen)));
}

BOOST_AUTO_TEST_CASE(explicit_advertise_wins_over_everything) {
  advertise_options options{"node7.cluster", "127.0.0.0/8", "10.0.0.5"};
  auto chosen = choose_advertise_address(options, "10.9.9.9");
  BOOST_REQUIRE(chosen);
  BOOST_TEST(*chosen == "node7.cluster");
}

BOOST_AUTO_TEST_CASE(environment_value_wins_over_netmask_and_fallback) {
  advertise_options options{"", "127.0.0.0/8", "10.0.0.5"};
  auto chosen = choose_advertise_address(options, "10.9.9.9");
  BOOST_REQUIRE(chosen);
  BOOST_TEST(*chosen == "10.9.9.9");
}

BOOST_AUTO_TEST_CASE(bad_environment_value_is_rejected_naming_the_variable) {
  auto chosen = choose_advertise_address({}, "bad host");
  BOOST_REQUIRE(!chosen);
  BOOST_TEST(chosen.err().message ==
             "STROM_ADVERTISE_ADDRESS: host 'bad host' may only hold letters, digits, '-', '.' "
             "and '_', found ' ' at offset 3");
}

BOOST_AUTO_TEST_CASE(malformed_netmask_is_rejected_naming_it) {
  advertise_options options{"", "10.0.0.0/40", "10.0.0.5"};
  auto chosen = choose_advertise_address(options, "");
  BOOST_REQUIRE(!chosen);
  BOOST_TEST(chosen.err().message == "--netmask '10.0.0.0/40': prefix length must be 0..32");
}

BOOST_AUTO_TEST_CASE(fallback_is_the_listen_host) {
  advertise_options options{"", "", "10.0.0.5"};
  auto chosen = choose_advertise_address(options, "");
  BOOST_REQUIRE(chosen);
  BOOST_TEST(*chosen == "10.0.0.5");
}

BOOST_AUTO_TEST_CASE(wildcard_listen_host_falls_back_to_loopback) {
  for (const char* wildcard : {"", "0.0.0.0", "::"}) {
    advertise_options options{"", "", wildcard};
    auto chosen = choose_advertise_address(options, "");
    BOOST_REQUIRE(chosen);
    BOOST_TEST(*chosen == "127.0.0.1");
  }
}
