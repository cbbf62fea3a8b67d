#define BOOST_TEST_MODULE actors_errors
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "support/deterministic_system.hpp"

using namespace strom::actors;

BOOST_AUTO_TEST_CASE(a_strom_error_carries_its_code_category_and_words) {
  const auto err = make_error(strom_error::node_lost, "node 3 (w at h) lost: gone");
  BOOST_TEST(err.category() == strom_error_category);
  BOOST_TEST((strom_code_of(err) == strom_error::node_lost));
  BOOST_TEST(!strom_code_of(caf::make_error(caf::sec::request_timeout)).has_value());
  BOOST_TEST((caf::error{strom_error::timeout} == make_error(strom_error::timeout)));
}

BOOST_AUTO_TEST_CASE(error_text_and_the_systems_renderer_show_the_words) {
  strom::testing::deterministic_system env;
  const auto err = make_error(strom_error::bad_job, "job.capnp: layers[0].units: 0");
  BOOST_TEST(error_text(env.sys, err) == "job.capnp: layers[0].units: 0");
  BOOST_TEST(env.sys.render(err) == "job.capnp: layers[0].units: 0");
  BOOST_TEST(error_text(env.sys, make_error(strom_error::job_cancelled)) == "job_cancelled");
}

BOOST_AUTO_TEST_CASE(a_strom_error_keeps_code_and_words_across_the_wire) {
  strom::testing::deterministic_system env;
  const auto sent = make_error(strom_error::join_refused, "the scheduler refused the join: x");
  std::vector<char> bytes;
  caf::binary_serializer sink{env.sys, bytes};
  BOOST_REQUIRE(!sink(sent));
  caf::error received;
  caf::binary_deserializer source{env.sys, bytes};
  BOOST_REQUIRE(!source(received));
  BOOST_TEST((strom_code_of(received) == strom_error::join_refused));
  BOOST_TEST(error_text(env.sys, received) == "the scheduler refused the join: x");
}
