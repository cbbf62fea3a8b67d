#pragma once
// A seeded generator with a fully specified output sequence. std::normal_distribution and
// friends differ between standard libraries; strom's runs must repeat bit for bit from
// the job's seed on any machine, so the distributions are written out here.

#include <cmath>
#include <cstdint>
#include <numbers>

namespace strom::compute {

/// xoshiro256** seeded through splitmix64 (Blackman and Vigna, 2018).
class rng {
public:
  explicit rng(std::uint64_t seed) {
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  /// Next 64 random bits.
  std::uint64_t next() noexcept {
    const std::uint64_t out = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return out;
  }

  /// Uniform in [0, 1).
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform in [low, high).
  float uniform(float low, float high) noexcept {
    return low + static_cast<float>(uniform()) * (high - low);
  }

  /// Uniform integer in [0, bound), bound > 0 (Lemire's multiply-shift; the tiny bias is
  /// irrelevant for shuffling and dropout).
  std::uint64_t below(std::uint64_t bound) noexcept {
    __extension__ using wide = unsigned __int128;  // g++ and clang extension, quiet under -Wpedantic
    return static_cast<std::uint64_t>((static_cast<wide>(next()) * bound) >> 64);
  }

  /// Standard normal sample (Box-Muller).
  double normal() noexcept {
    double u1 = uniform();
    while (u1 <= 0.0)
      u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

/// A seed derived from a base seed and a stream number, so that workers, layers and epochs
/// draw independent sequences from one job seed.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) noexcept {
  std::uint64_t z = seed ^ (stream * 0xd1342543de82ef95ULL + 0x632be59bd9b4e019ULL);
  z = (z ^ (z >> 32)) * 0xd6e8feb86659fd93ULL;
  return z ^ (z >> 32);
}

} // namespace strom::compute
