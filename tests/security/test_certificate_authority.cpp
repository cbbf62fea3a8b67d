#define BOOST_TEST_MODULE security_certificate_authority
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "strom/runtime/security/certificate_authority.hpp"
#include "strom/runtime/security/peer_role.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "support/scratch_dir.hpp"

// `strom certs init`'s library side: a CA and per-name certificates that OpenSSL verifies,
// with private keys only their owner reads, roles a peer can read back, and clear refusals.

using namespace strom::runtime;
namespace fs = std::filesystem;

namespace {

using certificate_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

certificate_ptr read_certificate(const fs::path& path) {
  FILE* file = std::fopen(path.c_str(), "r");
  BOOST_REQUIRE_MESSAGE(file, "cannot open " << path);
  certificate_ptr certificate{PEM_read_X509(file, nullptr, nullptr, nullptr), X509_free};
  std::fclose(file);
  BOOST_REQUIRE_MESSAGE(certificate, path << " holds no certificate");
  return certificate;
}

/// A directory with CA, node certificates scheduler and w1 and a client certificate alice.
struct initialised {
  initialised() {
    auto made = init_certificates({dir.string(), {"scheduler", "w1"}, {"alice"}});
    BOOST_REQUIRE_MESSAGE(made.ok(), (made.ok() ? std::string{} : made.err().message));
  }
  tls_files files_of(const std::string& name) const {
    return {(dir / "ca.pem").string(), (dir / (name + ".pem")).string(),
            (dir / (name + ".key")).string()};
  }
  strom::test::scratch scratch;
  fs::path dir = scratch.path() / "certs";
};

std::string error_of(const strom::result<std::shared_ptr<const tls_context>>& loaded) {
  return loaded.ok() ? std::string{"(loaded)"} : loaded.err().message;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(init_writes_the_ca_and_a_pair_per_name, initialised) {
  for (const char* name : {"ca", "scheduler", "w1", "alice"})
    for (const char* suffix : {".pem", ".key"})
      BOOST_TEST(fs::is_regular_file(dir / (std::string{name} + suffix)), name << suffix);
}

BOOST_FIXTURE_TEST_CASE(private_keys_have_mode_0600, initialised) {
  for (const char* name : {"ca", "scheduler", "w1", "alice"}) {
    struct stat info {};
    BOOST_REQUIRE(::stat((dir / (std::string{name} + ".key")).c_str(), &info) == 0);
    BOOST_TEST((info.st_mode & 0777) == 0600u, name << ".key mode " << std::oct
                                                    << (info.st_mode & 0777));
  }
}

BOOST_FIXTURE_TEST_CASE(member_certificates_chain_to_the_ca, initialised) {
  auto authority = read_certificate(dir / "ca.pem");
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store{X509_STORE_new(), X509_STORE_free};
  X509_STORE_add_cert(store.get(), authority.get());
  for (const char* name : {"scheduler", "w1", "alice"}) {
    auto member = read_certificate(dir / (std::string{name} + ".pem"));
    std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> check{X509_STORE_CTX_new(),
                                                                           X509_STORE_CTX_free};
    X509_STORE_CTX_init(check.get(), store.get(), member.get(), nullptr);
    BOOST_TEST(X509_verify_cert(check.get()) == 1,
               name << ": " << X509_verify_cert_error_string(X509_STORE_CTX_get_error(check.get())));
  }
}

BOOST_FIXTURE_TEST_CASE(the_role_and_name_are_read_back_from_the_certificate, initialised) {
  auto node = read_certificate(dir / "w1.pem");
  auto client = read_certificate(dir / "alice.pem");
  auto authority = read_certificate(dir / "ca.pem");
  BOOST_TEST((role_of(node.get()) == std::optional{peer_role::node}));
  BOOST_TEST((role_of(client.get()) == std::optional{peer_role::client}));
  BOOST_TEST(!role_of(authority.get()).has_value());
  BOOST_TEST(common_name_of(client.get()) == "alice");
}

BOOST_FIXTURE_TEST_CASE(a_loaded_context_names_its_holder_and_role, initialised) {
  auto loaded = tls_context::load(files_of("alice"));
  BOOST_REQUIRE_MESSAGE(loaded.ok(), error_of(loaded));
  BOOST_TEST((*loaded)->identity().name == "alice");
  BOOST_TEST(((*loaded)->identity().role == peer_role::client));
}

BOOST_AUTO_TEST_CASE(a_directory_that_cannot_be_made_is_named) {
  strom::test::scratch scratch;
  const auto blocker = scratch.write("file", "not a directory");
  auto made = init_certificates({(blocker / "certs").string(), {"w1"}, {}});
  BOOST_REQUIRE(!made.ok());
  BOOST_TEST(contains(made.err().message, "cannot create the directory " + (blocker / "certs").string()),
             made.err().message);
}

BOOST_FIXTURE_TEST_CASE(existing_files_are_never_overwritten, initialised) {
  const auto before = read_certificate(dir / "ca.pem");
  auto again = init_certificates({dir.string(), {"w2"}, {}});
  BOOST_REQUIRE(!again.ok());
  BOOST_TEST(contains(again.err().message, (dir / "ca.pem").string() + " exists already"),
             again.err().message);
  BOOST_TEST(X509_cmp(before.get(), read_certificate(dir / "ca.pem").get()) == 0);
  BOOST_TEST(!fs::exists(dir / "w2.pem"));
}

BOOST_AUTO_TEST_CASE(names_that_cannot_be_file_names_are_refused_before_anything_is_written) {
  strom::test::scratch scratch;
  for (const std::string bad : {"a/b", "", "ca", ".hidden", "sp ace"}) {
    auto made = init_certificates({(scratch.path() / "certs").string(), {"w1", bad}, {}});
    BOOST_TEST(!made.ok(), "'" << bad << "' accepted");
    BOOST_TEST(!fs::exists(scratch.path() / "certs" / "ca.pem"));
  }
  auto twice = init_certificates({(scratch.path() / "certs").string(), {"w1"}, {"w1"}});
  BOOST_REQUIRE(!twice.ok());
  BOOST_TEST(contains(twice.err().message, "'w1' is given twice"), twice.err().message);
}

BOOST_FIXTURE_TEST_CASE(a_missing_file_is_named_with_its_option, initialised) {
  auto files = files_of("w1");
  files.key = (dir / "nobody.key").string();
  auto loaded = tls_context::load(files);
  BOOST_TEST(contains(error_of(loaded), "--tls-key " + files.key + ": cannot read it"),
             error_of(loaded));
}

BOOST_FIXTURE_TEST_CASE(a_key_of_another_certificate_is_refused, initialised) {
  auto files = files_of("w1");
  files.key = (dir / "alice.key").string();
  auto loaded = tls_context::load(files);
  BOOST_TEST(contains(error_of(loaded), "--tls-key " + files.key + ": does not belong to the "
                                        "certificate in --tls-cert " + files.certificate),
             error_of(loaded));
}

BOOST_FIXTURE_TEST_CASE(a_certificate_of_another_ca_is_refused_at_load, initialised) {
  const auto other = scratch.path() / "other";
  BOOST_REQUIRE(init_certificates({other.string(), {"w1"}, {}}).ok());
  auto files = files_of("w1");
  files.certificate = (other / "w1.pem").string();
  files.key = (other / "w1.key").string();
  auto loaded = tls_context::load(files);
  BOOST_TEST(contains(error_of(loaded), "--tls-cert " + files.certificate + ": not signed by the "
                                        "CA in --tls-ca " + files.ca),
             error_of(loaded));
}

BOOST_FIXTURE_TEST_CASE(a_file_that_is_not_pem_is_named, initialised) {
  auto files = files_of("w1");
  files.ca = scratch.write("junk.pem", "no certificate here\n").string();
  auto loaded = tls_context::load(files);
  BOOST_TEST(contains(error_of(loaded), "--tls-ca " + files.ca + ": holds no PEM certificate"),
             error_of(loaded));
}
