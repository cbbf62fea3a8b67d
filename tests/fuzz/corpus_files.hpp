#pragma once
// What the corpus makers (make_corpus.cpp, make_data_corpus.cpp) share: writing one corpus
// file, and the bit flip most hostile variants start from.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace strom::fuzz {

/// Writes `content` (a vector of bytes) to folder/name, creating the folder; exits on failure.
template <class Bytes>
void write_corpus_file(const std::filesystem::path& folder, const std::string& name,
                       const Bytes& content) {
  std::filesystem::create_directories(folder);
  const auto path = folder / name;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr || std::fwrite(content.data(), 1, content.size(), file) != content.size()) {
    std::fprintf(stderr, "corpus: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fclose(file);
}

/// `b` with bit `bit` (counted from the first byte's lowest bit) flipped.
template <class Bytes>
Bytes flip_bit(Bytes b, std::size_t bit) {
  using byte = typename Bytes::value_type;
  b[bit / 8] = static_cast<byte>(static_cast<unsigned>(b[bit / 8]) ^ (1u << (bit % 8)));
  return b;
}

} // namespace strom::fuzz
