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
  check_order(order);
  for (slot& s : ring_) {
    s.features.resize(batch_size * sample_floats_);
    s.labels.resize(batch_size);
  }
  total_ = count_batches(order.size());
  order_ = std::move(order);
  producer_ = std::thread([this] { produce(); });
}

batch_loader::~batch_loader() {
  {
    // Notifying under the lock keeps helgrind quiet; nothing here is hot.
    std::lock_guard guard(mutex_);
    stop_ = true;
    changed_.notify_all();
  }
  producer_.join();
}

const batch* batch_loader::next() {
  std::unique_lock lock(mutex_);
  if (released_ < handed_) {
    released_ = handed_;
    changed_.notify_all();
  }
  if (handed_ == total_)
    return nullptr;
  changed_.wait(lock, [this] { return produced_ > handed_; });
  return &ring_[handed_++ % slots].view;
}

void batch_loader::reset(std::vector<std::uint32_t> order) {
  check_order(order);
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !filling_; });
  total_ = count_batches(order.size());
  order_ = std::move(order);
  produced_ = handed_ = released_ = 0;
  changed_.notify_all();
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

void batch_loader::fill(slot& target, std::size_t batch_index) {
  const std::size_t first = batch_index * batch_size_;
  const std::size_t size = std::min(batch_size_, order_.size() - first);
  const float* features = data_.features.data();
  for (std::size_t i = 0; i < size; ++i) {
    const std::size_t sample = order_[first + i];
    std::memcpy(target.features.data() + i * sample_floats_, features + sample * sample_floats_,
                sample_floats_ * sizeof(float));
    target.labels[i] = data_.labels[sample];
  }
  target.view = {{target.features.data(), size * sample_floats_}, {target.labels.data(), size},
                 size};
}

void batch_loader::produce() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // Work exists when the epoch has batches left and the ring has a slot the consumer freed.
    changed_.wait(lock, [this] {
      return stop_ || (produced_ < total_ && produced_ - released_ < slots);
    });
    if (stop_)
      return;
    const std::size_t index = produced_;
    filling_ = true;
    lock.unlock();
    fill(ring_[index % slots], index);
    lock.lock();
    filling_ = false;
    ++produced_;
    changed_.notify_all();
  }
}

} // namespace strom::compute
