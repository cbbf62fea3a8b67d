#include "strom/compute/data/batch_loader.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace strom::compute {

batch_loader::batch_loader(const dataset& data, std::vector<std::uint32_t> order,
                           std::size_t batch_size, bool drop_last)
  : data_(data), batch_size_(batch_size), drop_last_(drop_last),
    sample_floats_(data.sample_shape.size()) {
  if (batch_size == 0)
    throw std::invalid_argument("batch_loader: batch size must be at least 1");
  reset(std::move(order));
  features_.resize(batch_size * sample_floats_);
  labels_.resize(batch_size);
}

const batch* batch_loader::next() {
  if (handed_ == total_)
    return nullptr;
  const std::size_t first = handed_++ * batch_size_;
  const std::size_t size = std::min(batch_size_, order_.size() - first);
  const float* features = data_.features.data();
  for (std::size_t i = 0; i < size; ++i) {
    const std::size_t sample = order_[first + i];
    std::memcpy(features_.data() + i * sample_floats_, features + sample * sample_floats_,
                sample_floats_ * sizeof(float));
    labels_[i] = data_.labels[sample];
  }
  view_ = {{features_.data(), size * sample_floats_}, {labels_.data(), size}, size};
  return &view_;
}

void batch_loader::reset(std::vector<std::uint32_t> order) {
  check_order(order);
  total_ = count_batches(order.size());
  order_ = std::move(order);
  handed_ = 0;
}

void batch_loader::check_order(const std::vector<std::uint32_t>& order) const {
  const auto largest = std::max_element(order.begin(), order.end());
  if (largest != order.end() && *largest >= data_.size())
    throw std::out_of_range(fmt::format("batch_loader: sample index {} in the order, but the "
                                        "dataset has {} samples",
                                        *largest, data_.size()));
}

std::size_t batch_loader::count_batches(std::size_t samples) const noexcept {
  return drop_last_ ? samples / batch_size_ : (samples + batch_size_ - 1) / batch_size_;
}

} // namespace strom::compute
