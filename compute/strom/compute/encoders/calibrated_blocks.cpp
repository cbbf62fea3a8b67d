#include "strom/compute/encoders/calibrated_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/codecs/block_codec.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/encoders/magnitude_quantile.hpp"
#include "strom/compute/encoders/magnitude_select.hpp"

namespace strom::compute {

namespace {

/// A sparse block lists at most a sixteenth of its elements: beyond that a bitmap is smaller.
constexpr std::size_t sparse_divisor = 16;

/// The blocks in order with the gaps between them (and after them) filled, so that every
/// element belongs to one; throws on blocks outside the buffer or out of order.
std::vector<parameter_block> covering(std::size_t elements, std::vector<parameter_block> blocks) {
  std::vector<parameter_block> out;
  std::size_t next = 0;
  for (const auto& block : blocks) {
    if (block.offset < next || block.count > elements || block.offset > elements - block.count)
      throw std::invalid_argument("calibrated_blocks: block [" + std::to_string(block.offset) +
                                  ", " + std::to_string(block.offset + block.count) +
                                  ") is out of order or outside " + std::to_string(elements) +
                                  " elements");
    if (block.offset > next)
      out.push_back({next, block.offset - next});
    if (block.count > 0)
      out.push_back(block);
    next = block.offset + block.count;
  }
  if (next < elements)
    out.push_back({next, elements - next});
  return out;
}

/// Words block `count` may take at most: fp16 when dense, else a list or a bitmap.
std::size_t most_words(std::size_t count, std::size_t dense_elements) {
  return count <= dense_elements ? fp16_words(count) : bitmap_words(count);
}

} // namespace

calibrated_blocks::calibrated_blocks(std::size_t elements, std::vector<parameter_block> blocks,
                                     calibrated_threshold_options options)
  : elements_(elements), options_(options) {
  if (!(options.density > 0.0 && options.density <= 1.0 / sparse_divisor))
    throw std::invalid_argument("calibrated_blocks: density must be in (0, 1/16], got " +
                                std::to_string(options.density));
  if (elements > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("calibrated_blocks: " + std::to_string(elements) +
                                " elements do not fit signed 32-bit indices");
  std::size_t words = 1;
  for (const auto& block : covering(elements, std::move(blocks))) {
    figures_.push_back({.offset = block.offset, .count = block.count});
    words += block_header_words + most_words(block.count, options.dense_elements);
  }
  words_.resize(words);
  headers_.reserve(1 + block_header_words * figures_.size());
}

std::optional<encoded_update> calibrated_blocks::encode(std::span<float> residual,
                                                        std::uint64_t iteration) {
  if (residual.size() != elements_)
    throw std::invalid_argument("calibrated_blocks: residual of " +
                                std::to_string(residual.size()) + " elements for a buffer of " +
                                std::to_string(elements_));
  // The payloads are written from the place after every block's header; the headers of the
  // blocks that sent something are put in front of them at the end.
  const std::size_t body_start = 1 + block_header_words * figures_.size();
  headers_.assign(1, 0u);
  body_words_ = 0;
  last_values_ = 0;
  for (std::size_t b = 0; b < figures_.size(); ++b)
    last_values_ +=
      encode_block(b, residual.subspan(figures_[b].offset, figures_[b].count), iteration);
  const std::size_t blocks = (headers_.size() - 1) / block_header_words;
  if (blocks == 0)
    return std::nullopt;
  headers_[0] = static_cast<std::uint32_t>(blocks);
  const std::size_t start = headers_.size();
  std::memmove(words_.data() + start, words_.data() + body_start, body_words_ * 4);
  std::copy(headers_.begin(), headers_.end(), words_.begin());
  const auto payload = std::span<const std::uint32_t>(words_.data(), start + body_words_);
  return encoded_update{encoding::blocks, threshold(), elements_, last_values_,
                        std::as_bytes(payload)};
}

std::size_t calibrated_blocks::encode_block(std::size_t b, std::span<float> r,
                                            std::uint64_t iteration) {
  auto& figures = figures_[b];
  ++figures.encodes;
  if (r.size() <= options_.dense_elements)
    return encode_dense(figures, r);
  const float estimate = magnitude_quantile(r, options_.density, iteration, sample_);
  // Zero residual elements are never worth a message, whatever the quantile says.
  return encode_sparse(figures, r, std::max(estimate, std::numeric_limits<float>::min()));
}

std::size_t calibrated_blocks::encode_sparse(block_figures& figures, std::span<float> r,
                                             float threshold) {
  const std::size_t body = 1 + block_header_words * figures_.size() + body_words_;
  auto* indices = reinterpret_cast<std::int32_t*>(words_.data() + body);
  const std::size_t capacity = r.size() / sparse_divisor;
  const magnitude_selection selection =
    magnitude_select(r, threshold, std::span<std::int32_t>(indices, capacity));
  const std::size_t hits = selection.hits;
  figures.threshold = threshold;
  if (hits == 0) {
    figures.scale = 0.0f;
    figures.residual_mass = selection.total_mass;
    return 0;
  }
  block_header header{encoding::threshold, static_cast<std::uint32_t>(figures.offset),
                      static_cast<std::uint32_t>(figures.count), threshold, 0};
  std::size_t values = hits;
  if (hits > capacity) {
    // More than a sixteenth reached the estimate (ties): a bitmap of +-threshold is smaller.
    auto words = std::span<std::uint32_t>(words_.data() + body, bitmap_words(r.size()));
    values = bitmap_encode(r, threshold, words);
    header.enc = encoding::bitmap;
    header.words = static_cast<std::uint32_t>(words.size());
    figures.sent_mass += static_cast<double>(values) * threshold;
    figures.residual_mass = 0.0;
    for (const float v : r)
      figures.residual_mass += std::fabs(static_cast<double>(v));
  } else {
    // Every sent element carries the mean magnitude of those sent: the block's mass arrives.
    header.scale = static_cast<float>(selection.selected_mass / static_cast<double>(hits));
    double left = 0.0;  // what the sent elements keep
    for (std::size_t k = 0; k < hits; ++k) {
      const std::int32_t index = indices[k];
      float& element = r[static_cast<std::size_t>(index > 0 ? index : -index) - 1];
      element -= index > 0 ? header.scale : -header.scale;
      left += std::fabs(static_cast<double>(element));
    }
    figures.residual_mass =
      std::max(selection.total_mass - selection.selected_mass, 0.0) + left;
    header.words = static_cast<std::uint32_t>(hits);
    figures.sent_mass += selection.selected_mass;
  }
  figures.scale = header.scale;
  figures.last_encoding = header.enc;
  figures.values_sent += values;
  headers_.resize(headers_.size() + block_header_words);
  put_block_header(headers_.data() + headers_.size() - block_header_words, header);
  body_words_ += header.words;
  return values;
}

std::size_t calibrated_blocks::encode_dense(block_figures& figures, std::span<float> r) {
  const std::size_t body = 1 + block_header_words * figures_.size() + body_words_;
  const std::size_t words = fp16_words(r.size());
  std::uint32_t* out = words_.data() + body;
  double mass = 0.0;
  double left = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    // A value that is not finite is not sent (a receiver would refuse the frame): it stays.
    const std::uint16_t half = std::isfinite(r[i]) ? float_to_half(r[i]) : std::uint16_t{0};
    const float sent = half_to_float(half);
    r[i] -= sent;  // the rounding stays in the residual and goes with a later step
    mass += static_cast<double>(std::fabs(sent));
    left += std::fabs(static_cast<double>(r[i]));
    if (i % 2 == 0)
      out[i / 2] = half;
    else
      out[i / 2] |= static_cast<std::uint32_t>(half) << 16;
  }
  figures.threshold = 0.0f;
  figures.scale = 0.0f;
  figures.last_encoding = encoding::dense_fp16;
  figures.values_sent += r.size();
  figures.sent_mass += mass;
  figures.residual_mass = left;
  const block_header header{encoding::dense_fp16, static_cast<std::uint32_t>(figures.offset),
                            static_cast<std::uint32_t>(figures.count), 0.0f,
                            static_cast<std::uint32_t>(words)};
  headers_.resize(headers_.size() + block_header_words);
  put_block_header(headers_.data() + headers_.size() - block_header_words, header);
  body_words_ += words;
  return r.size();
}

float calibrated_blocks::threshold() const noexcept {
  const block_figures* largest = nullptr;
  for (const auto& figures : figures_)
    if (figures.threshold > 0.0f && (!largest || figures.count > largest->count))
      largest = &figures;
  return largest ? largest->threshold : std::numeric_limits<float>::min();
}

} // namespace strom::compute
