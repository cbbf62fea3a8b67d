#include "strom/runtime/sim/calibrate_tls.hpp"

#include <stdlib.h>

#include <fmt/format.h>

#include <filesystem>
#include <vector>

#include "strom/runtime/security/certificate_authority.hpp"
#include "strom/runtime/sim/tls_pipe.hpp"
#include "strom/runtime/node/training_setup.hpp"

namespace strom::runtime::sim {

namespace {

/// A frame's worth of bytes per measurement: the bitmap frames of a dense update are this big.
constexpr std::size_t measured_bytes = 256 * 1024;

/// Rounds measured at least, whatever the budget.
constexpr int min_rounds = 8;

/// A throwaway CA and one node's identity, loaded; the files are gone when this returns.
result<std::shared_ptr<const tls_context>> throwaway_identity() {
  std::string pattern = (std::filesystem::temp_directory_path() / "strom-tls-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    return error{fmt::format("cannot make a directory for a throwaway CA in {}",
                             std::filesystem::temp_directory_path().string())};
  const std::filesystem::path dir{pattern};
  auto made = init_certificates({dir.string(), {"calibrate"}, {}});
  auto loaded = made ? tls_context::load({(dir / "ca.pem").string(),
                                          (dir / "calibrate.pem").string(),
                                          (dir / "calibrate.key").string()})
                     : result<std::shared_ptr<const tls_context>>{made.err()};
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return loaded;
}

} // namespace

result<tls_rates> measure_tls_rates(double budget_seconds) {
  auto identity = throwaway_identity();
  if (!identity)
    return error{"measuring TLS: " + identity.err().message};
  auto link = tls_pipe::open(**identity, **identity);
  if (!link)
    return error{"measuring TLS: " + link.err().message};
  std::vector<std::byte> plaintext(measured_bytes, std::byte{0x5a});
  std::vector<std::byte> opened(measured_bytes);
  double sealing = 0;
  double opening = 0;
  std::size_t bytes = 0;
  const auto start = training_clock::now();
  for (int round = 0; round < min_rounds || seconds_since(start) < budget_seconds; ++round) {
    const auto seal_start = training_clock::now();
    auto records = (*link)->seal(plaintext);
    sealing += seconds_since(seal_start);
    if (!records)
      return error{"measuring TLS: " + records.err().message};
    const auto open_start = training_clock::now();
    if (auto ok = (*link)->open_into(*records, opened); !ok)
      return error{"measuring TLS: " + ok.err().message};
    opening += seconds_since(open_start);
    bytes += measured_bytes;
  }
  return tls_rates{static_cast<double>(bytes) / sealing, static_cast<double>(bytes) / opening};
}

} // namespace strom::runtime::sim
