// What putting an encoded update into a frame and reading it back costs next to encoding it:
// one JSON object per line with the threshold encoding time, the build_update_frame and
// read_update_frame times for its message, and overhead_fraction = (build + read) / encode
// (goal: below 0.05 without LZ4). Lines with lz4 "when_smaller" show what trying LZ4 adds;
// apply_s is the receiver's read + decode into the model, for scale.
//
//   bench_frame_codec [--elements N]   (default 10M)

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/random.hpp"
#include "json_line.hpp"
#include "synthetic_update.hpp"

using namespace strom::compute;

using strom::bench::best_seconds;
using strom::bench::make_update;
using strom::bench::print_json;
using strom::bench::rounded;

namespace {

constexpr std::size_t default_elements = 10'000'000;
constexpr double densities[] = {1e-4, 1e-3, 1e-2};
constexpr float encode_threshold = 0.5f;
// Best of this many runs: the least disturbed one on a shared machine.
constexpr std::size_t repetitions = 9;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "bench_frame_codec: %s\n", message.c_str());
  std::exit(1);
}

void bench(std::size_t n, double density, lz4_policy policy) {
  const auto update = make_update(n, density);
  threshold_encoder_options options;
  options.policy = threshold_policy(fixed_threshold_options{encode_threshold});
  options.clip_every = 0;
  threshold_encoder encoder(n, options);
  std::optional<encoded_update> message;
  const double encode_s = best_seconds(repetitions, [&] { message = encoder.encode(update); });
  if (!message)
    fail("the encoder sent nothing");

  const frame_options frame_opts{.lz4 = policy};
  std::optional<frame> built;
  const double build_s = best_seconds(repetitions, [&] {
    auto f = build_update_frame({.origin_node = 1, .sequence = 1}, *message, frame_opts);
    if (!f) fail(f.err().message);
    built = std::move(*f);
  });
  frame_workspace ws;
  std::size_t payload_bytes = 0;
  const double read_s = best_seconds(repetitions, [&] {
    auto view = read_update_frame(*built, ws);
    if (!view) fail(view.err().message);
    payload_bytes = view->payload.size();
  });
  std::vector<float> model(n, 0.0f);
  const double apply_s = best_seconds(repetitions, [&] {
    if (auto ok = apply_update_frame(*built, model, ws); !ok) fail(ok.err().message);
  });
  auto view = read_update_frame(*built, ws);
  const bool compressed = view && view->compression == frame_compression::lz4;
  print_json({{"bench", "frame_codec"}, {"elements", n}, {"density", density},
              {"lz4", policy == lz4_policy::never ? "never" : "when_smaller"},
              {"compressed", compressed}, {"values", message->values},
              {"payload_bytes", payload_bytes}, {"frame_bytes", built->size()},
              {"encode_s", encode_s}, {"build_s", build_s}, {"read_s", read_s},
              {"apply_s", apply_s},
              {"overhead_fraction", rounded((build_s + read_s) / encode_s, 4)}});
}

} // namespace

int main(int argc, char** argv) {
  std::size_t n = default_elements;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--elements") == 0 && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: bench_frame_codec [--elements N]\n");
      return 2;
    }
  }
  for (const double density : densities)
    for (const auto policy : {lz4_policy::never, lz4_policy::when_smaller})
      bench(n, density, policy);
  return 0;
}
