// Writes the regression corpus under tests/fuzz/corpus/: valid inputs made by the real
// builder and codecs, and the hostile variants each reader must refuse (truncated,
// bit-flipped, huge counts, misaligned, LZ4 bombs, broken payloads). Run it after changing a
// format, then commit the result:
//   ninja -C BUILD fuzz_make_corpus && BUILD/tests/fuzz/fuzz_make_corpus tests/fuzz/corpus

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <lz4.h>

#include "../frames/frame_samples.hpp"
#include "corpus_files.hpp"
#include "decoder_fuzz.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"

namespace {

namespace fs = std::filesystem;
using namespace strom;
using namespace strom::compute;

using bytes = std::vector<std::byte>;

/// Elements of the sample updates: below the update_frame target's 4096-element model, and
/// not a multiple of 16 so that padding is exercised.
constexpr std::size_t sample_elements = 999;

void write(const fs::path& folder, const std::string& name, const bytes& content) {
  fuzz::write_corpus_file(folder, name, content);
}

bytes frame_bytes(const frame& f) { return {f.bytes().begin(), f.bytes().end()}; }

bytes forged(const std::function<void(schema::UpdateFrame::Builder)>& fill) {
  const auto words = test::forge_frame_words(fill);
  const auto span = test::bytes_of(words);
  return {span.begin(), span.end()};
}

using fuzz::flip_bit;

bytes lz4_of(const bytes& raw) {
  bytes out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
  const int size = LZ4_compress_default(reinterpret_cast<const char*>(raw.data()),
                                        reinterpret_cast<char*>(out.data()),
                                        static_cast<int>(raw.size()), static_cast<int>(out.size()));
  out.resize(static_cast<std::size_t>(size));
  return out;
}

void fill_lz4(schema::UpdateFrame::Builder b, const bytes& block, std::uint32_t claimed_raw,
              std::uint64_t elements) {
  b.setEncoding(schema::Encoding::DENSE_FP32);
  b.setElementCount(elements);
  b.setCompression(schema::Compression::LZ4);
  b.setRawPayloadBytes(claimed_raw);
  auto data = b.initPayload(static_cast<unsigned>(block.size()));
  if (!block.empty())
    std::memcpy(data.begin(), block.data(), block.size());
}

void write_update_frame_corpus(const fs::path& folder) {
  const auto values = test::sparse_values(sample_elements, 7);
  frame valid_bitmap;
  for (const encoding enc : test::all_encodings) {
    const auto sample = test::encode_sample(enc, values);
    for (const auto policy : {lz4_policy::never, lz4_policy::when_smaller}) {
      auto f = build_update_frame({.origin_node = 1, .sequence = 5, .offset = 100},
                                  sample.update, {.lz4 = policy});
      if (!f) {
        std::fprintf(stderr, "make_corpus: %s\n", f.err().message.c_str());
        std::exit(1);
      }
      const bool lz4 = policy == lz4_policy::when_smaller;
      write(folder, std::string("valid_") + to_string(enc) + (lz4 ? "_lz4" : ""),
            frame_bytes(*f));
      if (enc == encoding::bitmap && !lz4)
        valid_bitmap = *f;
    }
  }
  const bytes base = frame_bytes(valid_bitmap);
  write(folder, "truncated_word", bytes(base.begin(), base.end() - 8));
  write(folder, "truncated_byte", bytes(base.begin(), base.end() - 3));
  write(folder, "header_only", bytes(base.begin(), base.begin() + 8));
  write(folder, "two_segments", flip_bit(base, 0));
  // Bits in the root pointer, the struct's fields (element count, encoding) and the payload
  // pointer: frame words 1, 2..9 and 10.
  for (const std::size_t bit : {64u + 3u, 64u + 40u, 2u * 64u + 7u, 6u * 64u + 1u,
                                 7u * 64u + 20u, 9u * 64u + 2u, 10u * 64u + 0u, 10u * 64u + 35u})
    write(folder, "bit_flip_" + std::to_string(bit), flip_bit(base, bit));
  // Misaligned: the frame shifted by four bytes inside an otherwise plausible length.
  bytes shifted(base.size(), std::byte{0});
  std::memcpy(shifted.data() + 4, base.data(), base.size() - 4);
  write(folder, "misaligned_by_4", shifted);
  bytes odd = base;
  odd.push_back(std::byte{0});
  write(folder, "odd_length", odd);

  const bytes four_floats(16, std::byte{0});
  write(folder, "huge_element_count", forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, std::numeric_limits<std::uint64_t>::max(),
                      four_floats);
  }));
  write(folder, "huge_offset", forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 4, four_floats);
    b.setOffset(std::numeric_limits<std::uint64_t>::max() - 1);
  }));
  write(folder, "unknown_encoding", forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 4, four_floats);
    b.setEncoding(static_cast<schema::Encoding>(200));
  }));
  write(folder, "raw_size_lies", forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 4, four_floats);
    b.setRawPayloadBytes(12);
  }));

  const bytes zeros(16384, std::byte{0});
  const bytes block = lz4_of(zeros);
  write(folder, "lz4_honest_zeros", forged([&](auto b) { fill_lz4(b, block, 16384, 4096); }));
  write(folder, "lz4_bomb_max_raw", forged([&](auto b) {
    fill_lz4(b, block, static_cast<std::uint32_t>(max_payload_bytes), 1u << 28);
  }));
  write(folder, "lz4_bomb_u32_raw", forged([&](auto b) {
    fill_lz4(b, block, std::numeric_limits<std::uint32_t>::max(),
             std::numeric_limits<std::uint64_t>::max());
  }));
  write(folder, "lz4_claims_more", forged([&](auto b) { fill_lz4(b, block, 16000, 4096); }));
  write(folder, "lz4_claims_less", forged([&](auto b) { fill_lz4(b, block, 16380, 4096); }));
  write(folder, "lz4_garbage", forged([&](auto b) { fill_lz4(b, bytes(64, std::byte{0xff}), 256, 64); }));
  write(folder, "empty", {});
}

/// A decoder fuzz input: target size, threshold, payload.
bytes decoder_input(std::uint16_t elements, float threshold, std::span<const std::byte> payload) {
  bytes out(fuzz::decoder_input_prefix + payload.size());
  std::memcpy(out.data(), &elements, sizeof elements);
  std::memcpy(out.data() + 2, &threshold, sizeof threshold);
  if (!payload.empty())
    std::memcpy(out.data() + fuzz::decoder_input_prefix, payload.data(), payload.size());
  return out;
}

void write_decoder_corpus(const fs::path& folder, encoding enc) {
  const auto sample = test::encode_sample(enc, test::sparse_values(sample_elements, 7));
  const auto payload = sample.update.payload;
  const auto n = static_cast<std::uint16_t>(sample_elements);
  const float t = sample.update.threshold;
  write(folder, "valid", decoder_input(n, t, payload));
  write(folder, "empty_target", decoder_input(0, t, {}));
  write(folder, "truncated_word", decoder_input(n, t, payload.first(payload.size() - 4)));
  write(folder, "truncated_byte", decoder_input(n, t, payload.first(payload.size() - 1)));
  write(folder, "target_too_small", decoder_input(n - 17, t, payload));
  write(folder, "target_too_large", decoder_input(n + 17, t, payload));
  write(folder, "nan_threshold", decoder_input(n, std::numeric_limits<float>::quiet_NaN(), payload));
  write(folder, "negative_threshold", decoder_input(n, -t, payload));
  bytes all_ones(payload.size(), std::byte{0xff});
  write(folder, "all_bits_set", decoder_input(n, t, all_ones));
  if (enc == encoding::threshold) {
    const std::int32_t hostile[] = {0, std::numeric_limits<std::int32_t>::min(),
                                    std::numeric_limits<std::int32_t>::max(), -1000, 1000};
    for (const std::int32_t index : hostile)
      write(folder, "index_" + std::to_string(index),
            decoder_input(n, t, std::as_bytes(std::span<const std::int32_t>(&index, 1))));
  }
}

} // namespace

/// Chunks as fuzz_snapshot_chunks reads them: each preceded by its length (4 bytes, LE).
bytes chunk_sequence(const std::vector<frame>& chunks, const std::vector<std::size_t>& order) {
  bytes out;
  for (const auto i : order) {
    const auto length = static_cast<std::uint32_t>(chunks[i].size());
    const auto* prefix = reinterpret_cast<const std::byte*>(&length);
    out.insert(out.end(), prefix, prefix + sizeof length);
    out.insert(out.end(), chunks[i].bytes().begin(), chunks[i].bytes().end());
  }
  return out;
}

void write_snapshot_chunks_corpus(const fs::path& folder) {
  replica_snapshot sample;
  sample.parameters.assign(sample_elements, 0.25f);
  sample.updater_state.assign(2 * sample_elements, -0.5f);
  sample.sharing = sharing_snapshot{std::vector<float>(sample_elements, 1e-4f), {}};
  sample.progress.origins = {{1, 0, 3, 0}};
  const auto encoded = encode_snapshot(sample);
  // Payloads of 4 KiB: the sample (about 16 KiB) spans a few chunks.
  auto made = chunk_snapshot({encoded.begin(), encoded.size()}, 7, 4096);
  if (!made) {
    std::fprintf(stderr, "corpus: %s\n", made.err().message.c_str());
    std::exit(1);
  }
  const auto& chunks = *made;
  std::vector<std::size_t> in_order(chunks.size());
  for (std::size_t i = 0; i < in_order.size(); ++i)
    in_order[i] = i;
  const auto valid = chunk_sequence(chunks, in_order);
  write(folder, "valid", valid);
  write(folder, "out_of_order", chunk_sequence(chunks, {0, 2, 1}));
  write(folder, "duplicate", chunk_sequence(chunks, {0, 1, 1}));
  write(folder, "missing_last", chunk_sequence(chunks, {0, 1}));
  write(folder, "flipped_bit_payload", fuzz::flip_bit(valid, 8 * (valid.size() - 20)));
  write(folder, "flipped_bit_header", fuzz::flip_bit(valid, 8 * 40 + 3));
  write(folder, "truncated", bytes(valid.begin(), valid.begin() + valid.size() / 2));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_corpus CORPUS_FOLDER\n");
    return 2;
  }
  const fs::path root = argv[1];
  write_update_frame_corpus(root / "update_frame");
  write_snapshot_chunks_corpus(root / "snapshot_chunks");
  for (const encoding enc : test::all_encodings)
    write_decoder_corpus(root / to_string(enc), enc);
  return 0;
}
