#pragma once
// Test fixtures written at test time: a scratch folder with that write IDX files plain or through zlib's gzip writer, and result messages.

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/scratch_dir.hpp"

namespace strom::test {

/// A scratch folder (support/scratch_dir.hpp) with writers for data files.
class scratch_dir : public scratch {
public:
  /// `name` inside the folder.
  std::string file(const std::string& name) const { return (path() / name).string(); }

  /// Writes `bytes` to `name` and returns its path.
  std::string write(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
    const auto target = file(name);
    std::ofstream out(target, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out)
      throw std::runtime_error("cannot write " + target);
    return target;
  }

  /// Writes `text` to `name` and returns its path.
  std::string write_text(const std::string& name, const std::string& text) const {
    return write(name, std::vector<std::uint8_t>(text.begin(), text.end()));
  }

  /// Writes `bytes` gzip-compressed (zlib's gzwrite) to `name` and returns its path.
  std::string write_gzip(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
    const auto target = file(name);
    gzFile out = gzopen(target.c_str(), "wb");
    if (out == nullptr)
      throw std::runtime_error("cannot gzopen " + target);
    const int written = gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size()));
    if (gzclose(out) != Z_OK || written != static_cast<int>(bytes.size()))
      throw std::runtime_error("cannot gzwrite " + target);
    return target;
  }
};

/// Appends `value` big-endian in `bytes` bytes.
inline void put_be(std::vector<std::uint8_t>& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i)
    out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

/// An IDX header: magic 00 00 type dims, then each dimension.
inline std::vector<std::uint8_t> idx_header(std::uint8_t type,
                                            std::initializer_list<std::uint32_t> dimensions) {
  std::vector<std::uint8_t> out{0, 0, type, static_cast<std::uint8_t>(dimensions.size())};
  for (auto d : dimensions)
    put_be(out, d, 4);
  return out;
}

/// An IDX ubyte file with the given dimensions and elements.
inline std::vector<std::uint8_t> idx_ubyte(std::initializer_list<std::uint32_t> dimensions,
                                           const std::vector<std::uint8_t>& elements) {
  auto out = idx_header(0x08, dimensions);
  out.insert(out.end(), elements.begin(), elements.end());
  return out;
}

/// The error message of `r`, or an empty text when it holds a value (for BOOST_*_MESSAGE,
/// which formats its message even when the check passes).
template <class Result>
std::string error_text(const Result& r) {
  return r.ok() ? std::string() : r.err().message;
}

} // namespace strom::test
