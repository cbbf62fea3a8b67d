#define BOOST_TEST_MODULE runtime_endpoint
#include <boost/test/unit_test.hpp>

#include <string>

#include "strom/runtime/transport/endpoint.hpp"

using namespace strom::runtime;

namespace {

/// The error message of parsing `text`, which must fail.
std::string parse_error(std::string_view text) {
  auto parsed = parse_endpoint(text);
  BOOST_REQUIRE_MESSAGE(!parsed, "'" << text << "' parsed but should not");
  return parsed.err().message;
}

} // namespace

BOOST_AUTO_TEST_CASE(host_name_and_port_parse) {
  auto parsed = parse_endpoint("node7.cluster:7070");
  BOOST_REQUIRE(parsed);
  BOOST_TEST(parsed->host == "node7.cluster");
  BOOST_TEST(parsed->port == 7070u);
}

BOOST_AUTO_TEST_CASE(ipv4_address_and_port_parse) {
  auto parsed = parse_endpoint("10.0.0.5:0");
  BOOST_REQUIRE(parsed);
  BOOST_TEST(parsed->host == "10.0.0.5");
  BOOST_TEST(parsed->port == 0u);
}

BOOST_AUTO_TEST_CASE(bracketed_ipv6_address_parses_without_brackets) {
  auto parsed = parse_endpoint("[fe80::1%eth0]:65535");
  BOOST_REQUIRE(parsed);
  BOOST_TEST(parsed->host == "fe80::1%eth0");
  BOOST_TEST(parsed->port == 65535u);
}

BOOST_AUTO_TEST_CASE(port_above_65535_is_rejected_naming_the_text) {
  BOOST_TEST(parse_error("localhost:99999") == "'localhost:99999': port must be 0..65535");
}

BOOST_AUTO_TEST_CASE(port_with_many_digits_is_rejected_without_overflow) {
  BOOST_TEST(parse_error("h:99999999999999999999999") ==
             "'h:99999999999999999999999': port must be 0..65535");
}

BOOST_AUTO_TEST_CASE(non_numeric_port_is_rejected) {
  BOOST_TEST(parse_error("localhost:http") == "'localhost:http': port 'http' is not a decimal number");
  BOOST_TEST(parse_error("localhost:-1") == "'localhost:-1': port '-1' is not a decimal number");
}

BOOST_AUTO_TEST_CASE(missing_port_is_rejected) {
  BOOST_TEST(parse_error("localhost") == "'localhost': expected HOST:PORT or [IPv6]:PORT");
  BOOST_TEST(parse_error("localhost:") == "'localhost:': missing port after ':'");
  BOOST_TEST(parse_error("[::1]") == "'[::1]': expected ':PORT' after ']'");
}

BOOST_AUTO_TEST_CASE(missing_host_is_rejected) {
  BOOST_TEST(parse_error(":8080") == "':8080': missing host");
  BOOST_TEST(parse_error("") == "'': expected HOST:PORT or [IPv6]:PORT");
}

BOOST_AUTO_TEST_CASE(unbracketed_ipv6_address_is_rejected) {
  BOOST_TEST(parse_error("::1:8080") ==
             "'::1:8080': write an IPv6 host in brackets, as in '[::1]:8080'");
}

BOOST_AUTO_TEST_CASE(malformed_ipv6_address_is_rejected) {
  BOOST_TEST(parse_error("[fe80::zz]:80") == "'[fe80::zz]:80': host 'fe80::zz' is not an IPv6 address");
  BOOST_TEST(parse_error("[::1:80") == "'[::1:80': '[' without a closing ']'");
}

BOOST_AUTO_TEST_CASE(host_with_a_space_is_rejected_naming_the_character) {
  BOOST_TEST(parse_error("my host:80") ==
             "'my host:80': host 'my host' may only hold letters, digits, '-', '.' and '_', "
             "found ' ' at offset 2");
}

BOOST_AUTO_TEST_CASE(to_string_reads_back) {
  for (const char* text : {"node7:7070", "10.0.0.5:1", "[::1]:8080"}) {
    auto parsed = parse_endpoint(text);
    BOOST_REQUIRE(parsed);
    BOOST_TEST(to_string(*parsed) == text);
  }
}

BOOST_AUTO_TEST_CASE(to_string_brackets_an_ipv6_host) {
  BOOST_TEST(to_string(endpoint{"fe80::1", 9}) == "[fe80::1]:9");
}
