// Update codec throughput: one JSON object per line, each with the codec, the operation, the
// buffer size and density, gbps (float bytes of the buffer per second) and memcpy_gbps (a
// memcpy of the same float buffer in the same run), so that figures compare across machines.
//
//   bench_codec [--quick] [--max-elements N]
//
// --quick stops at 1M elements; the default runs 1M, 10M and 100M.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/encoders/two_bit_encoder.hpp"
#include "strom/compute/random.hpp"
#include "json_line.hpp"
#include "synthetic_update.hpp"

using namespace strom::compute;

using strom::bench::best_seconds;
using strom::bench::make_update;
using strom::bench::print_json;
using strom::bench::rounded;

namespace {

constexpr std::size_t default_sizes[] = {1'000'000, 10'000'000, 100'000'000};
constexpr std::size_t quick_max_elements = 1'000'000;
constexpr double densities[] = {1e-4, 1e-3, 1e-2, 1e-1};
constexpr float encode_threshold = 0.5f;
std::size_t repetitions(std::size_t elements) {
  return elements >= 100'000'000 ? 3 : elements >= 10'000'000 ? 7 : 25;
}

double gbps(std::size_t elements, double seconds) {
  return static_cast<double>(elements * sizeof(float)) / seconds / 1e9;
}

struct line {
  const char* codec;
  const char* op;
  std::size_t elements;
  double density;
  const char* encoding_used;
  std::size_t values;
  std::size_t payload_bytes;
  double seconds;
  double memcpy_gbps;
};

void print(const line& l) {
  print_json({{"codec", l.codec}, {"op", l.op}, {"elements", l.elements},
              {"density", l.density}, {"encoding", l.encoding_used}, {"values", l.values},
              {"payload_bytes", l.payload_bytes}, {"seconds", l.seconds},
              {"ns_per_value",
               rounded(l.values > 0 ? l.seconds * 1e9 / static_cast<double>(l.values) : 0.0, 3)},
              {"gbps", rounded(gbps(l.elements, l.seconds), 3)},
              {"memcpy_gbps", rounded(l.memcpy_gbps, 3)}});
}

void bench_threshold(std::size_t n, double density, const std::vector<float>& update,
                     double memcpy_gbps) {
  threshold_encoder_options options;
  options.policy = threshold_policy(fixed_threshold_options{encode_threshold});
  options.clip_every = 0;
  threshold_encoder encoder(n, options);
  std::optional<encoded_update> message;
  const std::size_t reps = repetitions(n);
  const double encode_s = best_seconds(reps, [&] { message = encoder.encode(update); });
  if (!message) return;
  print({"threshold", "encode", n, density, to_string(message->enc), message->values,
         message->payload.size(), encode_s, memcpy_gbps});
  std::vector<float> target(n, 0.0f);
  const double decode_s = best_seconds(reps, [&] {
    if (!decode_add(message->enc, message->threshold, message->payload, target).ok()) std::abort();
  });
  print({"threshold", "decode", n, density, to_string(message->enc), message->values,
         message->payload.size(), decode_s, memcpy_gbps});
}

void bench_bitmap(std::size_t n, double density, const std::vector<float>& update,
                  double memcpy_gbps) {
  // The kernel is branch-free, so its time does not depend on what earlier passes left.
  std::vector<float> residual(update);
  std::vector<std::uint32_t> words(bitmap_words(n));
  std::size_t values = 0;
  const std::size_t reps = repetitions(n);
  const double encode_s = best_seconds(reps, [&] { bitmap_encode(residual, encode_threshold, words); });
  // Decode a bitmap of the first pass, not the emptied one the repetitions leave behind.
  residual = update;
  values = bitmap_encode(residual, encode_threshold, words);
  print({"bitmap", "encode", n, density, "bitmap", values, words.size() * 4, encode_s, memcpy_gbps});
  std::vector<float> target(n, 0.0f);
  const auto payload = std::as_bytes(std::span<const std::uint32_t>(words));
  const double decode_s = best_seconds(reps, [&] {
    if (!decode_add(encoding::bitmap, encode_threshold, payload, target).ok()) std::abort();
  });
  print({"bitmap", "decode", n, density, "bitmap", values, payload.size(), decode_s, memcpy_gbps});
}

void bench_two_bit(std::size_t n, double density, const std::vector<float>& update,
                   double memcpy_gbps) {
  two_bit_encoder encoder(n, two_bit_encoder_options{encode_threshold});
  encoded_update message;
  const std::size_t reps = repetitions(n);
  const double encode_s = best_seconds(reps, [&] { message = encoder.encode(update); });
  print({"two_bit", "encode", n, density, "two_bit", message.values, message.payload.size(),
         encode_s, memcpy_gbps});
  std::vector<float> target(n, 0.0f);
  const double decode_s = best_seconds(reps, [&] {
    if (!decode_add(message.enc, message.threshold, message.payload, target).ok()) std::abort();
  });
  print({"two_bit", "decode", n, density, "two_bit", message.values, message.payload.size(),
         decode_s, memcpy_gbps});
}

void bench_dense(std::size_t n, const std::vector<float>& update, double memcpy_gbps) {
  const std::size_t reps = repetitions(n);
  std::vector<float> target(n, 0.0f);
  const auto fp32 = dense_fp32_update(update);
  const double fp32_s = best_seconds(reps, [&] {
    if (!decode_add(fp32.enc, fp32.threshold, fp32.payload, target).ok()) std::abort();
  });
  print({"dense_fp32", "decode", n, 1.0, "dense_fp32", n, fp32.payload.size(), fp32_s, memcpy_gbps});
  fp16_encoder encoder(n);
  encoded_update fp16;
  const double encode_s = best_seconds(reps, [&] { fp16 = encoder.encode(update); });
  print({"dense_fp16", "encode", n, 1.0, "dense_fp16", n, fp16.payload.size(), encode_s, memcpy_gbps});
  const double decode_s = best_seconds(reps, [&] {
    if (!decode_add(fp16.enc, fp16.threshold, fp16.payload, target).ok()) std::abort();
  });
  print({"dense_fp16", "decode", n, 1.0, "dense_fp16", n, fp16.payload.size(), decode_s, memcpy_gbps});
}

} // namespace

int main(int argc, char** argv) {
  std::size_t max_elements = default_sizes[std::size(default_sizes) - 1];
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--quick") {
      max_elements = quick_max_elements;
    } else if (arg == "--max-elements" && a + 1 < argc) {
      max_elements = std::strtoull(argv[++a], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--max-elements N]\n", argv[0]);
      return 2;
    }
  }
  for (const std::size_t n : default_sizes) {
    if (n > max_elements) break;
    std::vector<float> source(n, 1.0f);
    std::vector<float> copy(n, 0.0f);
    const double memcpy_gbps = gbps(n, best_seconds(repetitions(n), [&] {
      std::memcpy(copy.data(), source.data(), n * sizeof(float));
    }));
    for (const double density : densities) {
      const auto update = make_update(n, density);
      bench_threshold(n, density, update, memcpy_gbps);
      bench_bitmap(n, density, update, memcpy_gbps);
      bench_two_bit(n, density, update, memcpy_gbps);
    }
    bench_dense(n, make_update(n, 0.0), memcpy_gbps);
  }
  return 0;
}
