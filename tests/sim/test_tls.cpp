#define BOOST_TEST_MODULE sim_tls
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/scenario_text.hpp"
#include "strom/runtime/security/certificate_authority.hpp"
#include "strom/runtime/sim/calibrate_tls.hpp"
#include "strom/runtime/sim/model/model.hpp"
#include "strom/runtime/sim/scenario.hpp"
#include "strom/runtime/sim/tls_pipe.hpp"
#include "support/scratch_dir.hpp"

// TLS on `strom sim`'s links: a pipe of two real TLS sessions in memory seals and opens
// frames into records of the size the model charges, refuses another CA's certificate, and
// its cost on this machine is measured; the model charges records and sealing on its links.

using namespace strom::runtime;
using namespace strom::runtime::sim;

namespace {

/// A CA in `dir` with node certificates for `names`, and the identity of the first.
std::shared_ptr<const tls_context> identity_in(const std::filesystem::path& dir,
                                               std::vector<std::string> names) {
  auto made = init_certificates({dir.string(), names, {}});
  BOOST_REQUIRE_MESSAGE(made, (made ? "" : made.err().message));
  auto loaded = tls_context::load({(dir / "ca.pem").string(), (dir / (names[0] + ".pem")).string(),
                                   (dir / (names[0] + ".key")).string()});
  BOOST_REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.err().message));
  return *loaded;
}

/// Runs the model of `text` with or without TLS on its links.
model_outcome run(const std::string& text, bool tls) {
  auto s = parse_scenario(text, "test.scenario", ".");
  BOOST_REQUIRE_MESSAGE(s, (s ? "" : s.err().message));
  sim_trace trace;
  auto out = run_model(*s, assumptions::strom, 1, trace, tls);
  BOOST_REQUIRE_MESSAGE(out, (out ? "" : out.err().message));
  return *out;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_pipe_seals_frames_into_records_of_the_size_the_model_charges) {
  strom::test::scratch dir;
  const auto identity = identity_in(dir.path(), {"w1"});
  auto pipe = tls_pipe::open(*identity, *identity);
  BOOST_REQUIRE_MESSAGE(pipe, (pipe ? "" : pipe.err().message));
  // Both certificates (about 600 bytes each) and the key shares crossed.
  BOOST_TEST((*pipe)->handshake_bytes() > 1000u);
  for (std::size_t size : {1u, 1000u, 16384u, 16385u, 300000u}) {
    BOOST_TEST_CONTEXT(size << " bytes") {
      std::vector<std::byte> plaintext(size);
      for (std::size_t i = 0; i < size; ++i)
        plaintext[i] = static_cast<std::byte>(i * 7 + 3);
      auto records = (*pipe)->seal(plaintext);
      BOOST_REQUIRE(records);
      BOOST_TEST(records->size() == tls_wire_bytes(size));
      // Sealed: the plaintext's run of bytes is nowhere in the records.
      const auto* first = reinterpret_cast<const unsigned char*>(plaintext.data());
      BOOST_TEST((size < 64 || std::search(records->begin(), records->end(), first, first + 64)
                                 == records->end()));
      std::vector<std::byte> opened(size);
      auto ok = (*pipe)->open_into(*records, opened);
      BOOST_REQUIRE_MESSAGE(ok, (ok ? "" : ok.err().message));
      BOOST_TEST((opened == plaintext));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_certificate_of_another_ca_is_refused_naming_why) {
  strom::test::scratch ours;
  strom::test::scratch theirs;
  const auto member = identity_in(ours.path(), {"w1"});
  const auto stranger = identity_in(theirs.path(), {"w9"});
  auto pipe = tls_pipe::open(*stranger, *member);
  BOOST_REQUIRE(!pipe);
  BOOST_TEST(pipe.err().message.find("not signed by the CA") != std::string::npos,
             pipe.err().message);
}

BOOST_AUTO_TEST_CASE(sealing_and_opening_are_measured_on_this_machine) {
  auto rates = measure_tls_rates(0.02);
  BOOST_REQUIRE_MESSAGE(rates, (rates ? "" : rates.err().message));
  // Any AEAD on any core of the last decade: well above 10 MB/s, below 1 TB/s.
  BOOST_TEST(rates->seal_bytes_per_second > 1e7);
  BOOST_TEST(rates->open_bytes_per_second > 1e7);
  BOOST_TEST(rates->seal_bytes_per_second < 1e12);
}

BOOST_AUTO_TEST_CASE(tls_links_carry_records_and_their_sealing_costs_the_senders_time) {
  // plain_over_a_slow_link (test_model) with TLS: the hub sends each of 2 nodes the other's
  // 1.25 MB frame a step over 125 MB/s, and seals it at 125 MB/s too: 2 x (10 ms sealing +
  // 10 ms on the wire) = 40 ms a step instead of 20, so half the samples a second.
  const auto costs = strom::test::given_costs(0.001, 0, 1'250'000);
  const auto tls_costs = costs.substr(0, costs.size() - 2)
                         + ", tlsSealBytesPerSecond = 125e6, tlsOpenBytesPerSecond = 125e6))";
  const std::string cluster = "nodes = (count = 2), topology = plain, link = (latencySeconds = "
                              "0, bandwidthGbitPerSecond = 1)";
  const auto plain = run(strom::test::scenario_text(cluster, "steps = 200", tls_costs), false);
  const auto sealed = run(strom::test::scenario_text(cluster, "steps = 200", tls_costs), true);
  BOOST_TEST(sealed.tls.on);
  BOOST_TEST(sealed.completed);
  BOOST_TEST(sealed.samples_per_second == plain.samples_per_second / 2,
             boost::test_tools::tolerance(0.03));
  // Every frame in 77 records of 22 bytes more.
  const double per_frame = static_cast<double>(tls_wire_bytes(1'250'000)) / 1'250'000;
  BOOST_TEST(tls_wire_bytes(1'250'000) == 1'250'000u + 77 * 22);
  BOOST_TEST(static_cast<double>(sealed.root.bytes_out)
               == static_cast<double>(plain.root.bytes_out) * per_frame,
             boost::test_tools::tolerance(0.01));
}

BOOST_AUTO_TEST_CASE(tls_links_need_the_rates_and_say_where_they_come_from) {
  auto s = parse_scenario(strom::test::scenario_text("nodes = (count = 2)", "steps = 10",
                                                     strom::test::given_costs(0.01, 0, 1000)),
                          "test.scenario", ".");
  BOOST_REQUIRE(s);
  auto needed = require_tls_costs(*s);
  BOOST_REQUIRE(!needed);
  BOOST_TEST(needed.err().message.find("test.scenario: costs: TLS links (--tls-*) need") == 0u,
             needed.err().message);
  BOOST_TEST(needed.err().message.find("tlsSealBytesPerSecond") != std::string::npos);
}
