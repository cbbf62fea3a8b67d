#pragma once
// A data file's content, read on demand: the file's bytes as they are, or gunzipped a piece
// at a time when they start with the gzip magic. A format reader reads its header first,
// learns from it how many bytes the content must hold, and only then allocates that much:
// a gzip bomb is never decompressed past what the header declares.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strom/compute/result.hpp"

struct z_stream_s;

namespace strom::compute {

/// Deflate's best case is 1032:1 (zlib technical details, "Maximum compression factor"),
/// so a gzip file can never legitimately decompress to more than this many times its size.
inline constexpr std::uint64_t max_deflate_ratio = 1032;

/// The content of one data file, read front to back.
class data_content {
public:
  /// `file_bytes` as read from `name` (named in every error).
  data_content(std::string name, std::vector<std::uint8_t> file_bytes);
  ~data_content();
  data_content(const data_content&) = delete;
  data_content& operator=(const data_content&) = delete;

  /// True when `bytes` start with the gzip magic 1f 8b (RFC 1952, section 2.3.1).
  static bool is_gzip(std::span<const std::uint8_t> bytes) noexcept;

  // -- properties --------------------------------------------------------------------------

  /// The file's name, for error messages.
  const std::string& name() const noexcept { return name_; }
  /// True when the file is gzip-compressed (it starts with the magic 1f 8b).
  bool gzip() const noexcept { return gzip_; }
  /// Bytes in the file as stored (compressed size for gzip).
  std::uint64_t file_size() const noexcept { return file_bytes_.size(); }
  /// The uncompressed size of the last gzip member as its trailer claims (RFC 1952 ISIZE,
  /// modulo 2^32); 0 when the file is too short to hold one. Never trusted, only compared.
  std::uint64_t trailer_size() const noexcept;
  /// The most bytes the content can legitimately hold: the file size, or for gzip the file
  /// size times max_deflate_ratio.
  std::uint64_t max_content_size() const noexcept;
  /// Content bytes delivered so far: the offset of the next byte read.
  std::uint64_t offset() const noexcept { return offset_; }

  // -- reading -----------------------------------------------------------------------------

  /// Fills `out` with the next content bytes; returns how many it got, fewer than
  /// out.size() only where the content ends. Concatenated gzip members are joined. Errors
  /// name the file and, for a corrupt stream, the decompressed and compressed offsets.
  result<std::size_t> read(std::span<std::uint8_t> out);

  /// The next `count` content bytes, fewer only where the content ends: a view into the
  /// file's bytes when plain (no copy), else inflated into `buffer`, resized to `count` (so
  /// check `count` first). Valid while this object and `buffer` live and stay unchanged.
  result<std::span<const std::uint8_t>> read_view(std::size_t count,
                                                  std::vector<std::uint8_t>& buffer);

private:
  result<std::size_t> inflate_into(std::span<std::uint8_t> out);

  std::string name_;
  std::vector<std::uint8_t> file_bytes_;
  bool gzip_ = false;
  std::uint64_t offset_ = 0;      // content bytes delivered
  std::size_t consumed_ = 0;      // gzip: compressed bytes used so far
  bool finished_ = false;         // gzip: the last member has ended
  std::unique_ptr<z_stream_s> stream_;  // gzip: started on the first read
};

} // namespace strom::compute
