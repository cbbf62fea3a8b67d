#pragma once
// Valid encoded updates of every encoding, built with the real codec kernels, and a way to
// forge arbitrary UpdateFrame messages (fields the builder would never write) for the
// hostile-input tests and the fuzz corpus generator.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/encoders/calibrated_blocks.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/codecs/encoded_update.hpp"
#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/codecs/two_bit_codec.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/frames/update_frame_checksum.hpp"
#include "strom/compute/random.hpp"
#include "strom/schema/update.capnp.h"

namespace strom::test {

/// An encoded update together with the words its payload lives in.
struct sample_update {
  std::vector<std::uint32_t> words;
  compute::encoded_update update;
};

/// A deterministic update of `n` elements: mostly zeros, every `stride`-th element +/- 1.
inline std::vector<float> sparse_values(std::size_t n, std::size_t stride) {
  std::vector<float> values(n, 0.0f);
  for (std::size_t i = 0; i < n; i += stride)
    values[i] = (i / stride) % 2 == 0 ? 1.0f : -1.0f;
  return values;
}

/// Uniform noise in [-1, 1): incompressible as fp32.
inline std::vector<float> noise_values(std::size_t n, std::uint64_t seed) {
  compute::rng gen(seed);
  std::vector<float> values(n);
  for (auto& v : values)
    v = gen.uniform(-1.0f, 1.0f);
  return values;
}

/// Encodes `values` with `enc` through the codec kernels (threshold 0.5 for the sparse ones).
inline sample_update encode_sample(compute::encoding enc, std::span<const float> values) {
  using compute::encoding;
  constexpr float threshold = 0.5f;
  sample_update s;
  const std::size_t n = values.size();
  std::vector<float> residual(n, 0.0f);
  std::size_t nonzero = 0;
  switch (enc) {
    case encoding::threshold: {
      std::vector<std::int32_t> indices(n);
      const std::size_t hits = compute::threshold_scan(residual, values, threshold, indices);
      indices.resize(hits);
      s.words.assign(indices.begin(), indices.end());
      nonzero = hits;
      break;
    }
    case encoding::bitmap:
      residual.assign(values.begin(), values.end());
      s.words.resize(compute::bitmap_words(n));
      nonzero = compute::bitmap_encode(residual, threshold, s.words);
      break;
    case encoding::two_bit:
      s.words.resize(compute::two_bit_words(n));
      nonzero = compute::two_bit_encode(residual, values, threshold, s.words);
      break;
    case encoding::dense_fp32:
      s.words.resize(n);
      std::memcpy(s.words.data(), values.data(), n * sizeof(float));
      for (float v : values) nonzero += v != 0.0f;
      break;
    case encoding::dense_fp16:
      s.words.resize(compute::fp16_words(n));
      compute::fp16_encode(values, s.words);
      for (float v : values) nonzero += v != 0.0f;
      break;
    case encoding::blocks: {
      // The calibrated encoding's: a large block (sparse, or a bitmap when dense) and a small
      // one in fp16 behind it.
      residual.assign(values.begin(), values.end());
      compute::calibrated_blocks blocks(n, {{0, n - n / 4}, {n - n / 4, n / 4}},
                                        {.dense_elements = n / 4});
      const auto encoded = blocks.encode(residual, 0);
      if (encoded) {
        const auto* first = reinterpret_cast<const std::uint32_t*>(encoded->payload.data());
        s.words.assign(first, first + encoded->payload.size() / 4);
        nonzero = encoded->values;
      }
      break;
    }
  }
  const bool dense = enc == encoding::dense_fp32 || enc == encoding::dense_fp16
                     || enc == encoding::blocks;
  s.update = {enc, dense ? 0.0f : threshold, n, nonzero,
              std::as_bytes(std::span<const std::uint32_t>(s.words))};
  return s;
}

/// Every encoding, for parameterised loops.
inline constexpr compute::encoding all_encodings[] = {
    compute::encoding::threshold, compute::encoding::bitmap, compute::encoding::two_bit,
    compute::encoding::dense_fp32, compute::encoding::dense_fp16, compute::encoding::blocks};

/// Serialises a message filled by `fill` with Cap'n Proto's own writer, bypassing every check
/// of build_update_frame: the way to make frames that lie. The checksum is a true one (a
/// peer that lies can compute it), unless `fill` set one itself.
inline std::vector<capnp::word> forge_frame_words(
    const std::function<void(schema::UpdateFrame::Builder)>& fill) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::UpdateFrame>();
  fill(root);
  if (root.getChecksum() == 0)
    root.setChecksum(
      compute::update_frame_checksum(root.asReader(), root.asReader().getPayload()));
  const auto flat = capnp::messageToFlatArray(message);
  std::vector<capnp::word> words(flat.size());
  std::memcpy(words.data(), flat.begin(), flat.size() * sizeof(capnp::word));
  return words;
}

/// Fills an honest uncompressed frame of `payload` covering `elements` elements.
inline void fill_honest(schema::UpdateFrame::Builder b, compute::encoding enc, float threshold,
                        std::uint64_t elements, std::span<const std::byte> payload) {
  b.setOriginNode(7);
  b.setSequence(3);
  b.setEncoding(static_cast<schema::Encoding>(enc));
  b.setThreshold(threshold);
  b.setElementCount(elements);
  b.setRawPayloadBytes(static_cast<std::uint32_t>(payload.size()));
  auto data = b.initPayload(static_cast<unsigned>(payload.size()));
  if (!payload.empty())
    std::memcpy(data.begin(), payload.data(), payload.size());
}

/// The bytes of `words`, for frame::from_bytes.
inline std::span<const std::byte> bytes_of(const std::vector<capnp::word>& words) {
  return std::as_bytes(std::span<const capnp::word>(words));
}

} // namespace strom::test
