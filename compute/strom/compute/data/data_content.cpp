#include "strom/compute/data/data_content.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "strom/compute/data/huge_pages.hpp"

namespace strom::compute {

namespace {

/// gzip's member header starts with these two bytes (RFC 1952, section 2.3.1).
constexpr std::uint8_t gzip_magic[2] = {0x1f, 0x8b};

/// zlib's windowBits for "gzip wrapper only" (zlib manual, inflateInit2).
constexpr int gzip_window_bits = 16 + MAX_WBITS;

/// The trailer ends every gzip member with CRC32 then ISIZE, 4 bytes each (RFC 1952, 2.3.1).
constexpr std::size_t isize_bytes = 4;

} // namespace

bool data_content::is_gzip(std::span<const std::uint8_t> bytes) noexcept {
  return bytes.size() >= 2 && bytes[0] == gzip_magic[0] && bytes[1] == gzip_magic[1];
}

data_content::data_content(std::string name, std::vector<std::uint8_t> file_bytes)
  : name_(std::move(name)), file_bytes_(std::move(file_bytes)),
    gzip_(is_gzip(file_bytes_)) {}

data_content::~data_content() {
  if (stream_)
    inflateEnd(stream_.get());
}

std::uint64_t data_content::trailer_size() const noexcept {
  const std::size_t n = file_bytes_.size();
  if (!gzip_ || n < isize_bytes)
    return 0;
  const std::uint8_t* p = file_bytes_.data() + n - isize_bytes;
  return std::uint64_t{p[0]} | std::uint64_t{p[1]} << 8 | std::uint64_t{p[2]} << 16
         | std::uint64_t{p[3]} << 24;
}

std::uint64_t data_content::max_content_size() const noexcept {
  return gzip_ ? file_size() * max_deflate_ratio : file_size();
}

result<std::size_t> data_content::read(std::span<std::uint8_t> out) {
  if (gzip_)
    return inflate_into(out);
  const auto count =
    static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), file_bytes_.size() - offset_));
  if (count != 0)
    std::memcpy(out.data(), file_bytes_.data() + offset_, count);
  offset_ += count;
  return count;
}

result<std::span<const std::uint8_t>> data_content::read_view(std::size_t count,
                                                              std::vector<std::uint8_t>& buffer) {
  if (!gzip_) {
    const auto available = static_cast<std::size_t>(file_bytes_.size() - offset_);
    const std::span<const std::uint8_t> view{file_bytes_.data() + offset_,
                                             std::min(count, available)};
    offset_ += view.size();
    return view;
  }
  resize_on_huge_pages(buffer, count);
  auto got = inflate_into(buffer);
  if (!got)
    return got.err();
  return std::span<const std::uint8_t>{buffer.data(), *got};
}

result<std::size_t> data_content::inflate_into(std::span<std::uint8_t> out) {
  if (!stream_) {
    stream_ = std::make_unique<z_stream>();
    if (inflateInit2(stream_.get(), gzip_window_bits) != Z_OK) {
      stream_.reset();
      return error{fmt::format("{}: cannot start gzip decompression: out of memory", name_)};
    }
  }
  z_stream& stream = *stream_;
  std::size_t filled = 0;
  while (filled < out.size() && !finished_) {
    // zlib counts in uInt (32 bits): feed at most that much per call.
    const std::size_t in_chunk = std::min<std::size_t>(file_bytes_.size() - consumed_, UINT_MAX);
    const std::size_t out_chunk = std::min<std::size_t>(out.size() - filled, UINT_MAX);
    stream.next_in = file_bytes_.data() + consumed_;
    stream.avail_in = static_cast<uInt>(in_chunk);
    stream.next_out = out.data() + filled;
    stream.avail_out = static_cast<uInt>(out_chunk);
    const int status = inflate(&stream, Z_NO_FLUSH);
    consumed_ += in_chunk - stream.avail_in;
    filled += out_chunk - stream.avail_out;
    const std::uint64_t produced = offset_ + filled;
    switch (status) {
      case Z_OK:
        break;
      case Z_STREAM_END: {
        if (consumed_ == file_bytes_.size()) {
          finished_ = true;
          break;
        }
        const std::span<const std::uint8_t> rest{file_bytes_.data() + consumed_,
                                                 file_bytes_.size() - consumed_};
        if (!is_gzip(rest))
          return error{fmt::format(
            "{}: expected another gzip member or the end of the file at compressed offset {} "
            "(decompressed offset {}), found {} more bytes",
            name_, consumed_, produced, rest.size())};
        inflateReset(&stream);
        break;
      }
      case Z_BUF_ERROR:
        // The output had room, so zlib could not go on for want of input.
        return error{fmt::format("{}: corrupt gzip stream: compressed data ends at offset {} "
                                 "before the stream does (decompressed offset {})",
                                 name_, consumed_, produced)};
      default:
        return error{fmt::format(
          "{}: corrupt gzip stream at decompressed offset {} (compressed offset {}): {}", name_,
          produced, consumed_, stream.msg ? stream.msg : zError(status))};
    }
  }
  offset_ += filled;
  return filled;
}

} // namespace strom::compute
