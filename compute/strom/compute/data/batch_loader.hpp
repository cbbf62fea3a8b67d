#pragma once
// A batch iterator over a dataset in a given sample order. It gathers each batch on the
// caller's thread into one buffer allocated once: a worker is one thread. (A prefetching
// thread per loader gave one worker nothing, since gathering a batch is a copy of a few
// hundred kilobytes, and cost two workers on two cores their cores: measured 9.7k instead of
// 1.7k context switches in a 3-epoch run.)

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strom/compute/data/dataset.hpp"

namespace strom::compute {

/// Samples gathered contiguously: features [size][sample floats] and one label each.
struct batch {
  std::span<const float> features;        ///< size * sample_shape.size() floats
  std::span<const std::int32_t> labels;   ///< size labels
  std::size_t size = 0;                   ///< samples in this batch
};

/// Iterates batches of a dataset in a given order.
class batch_loader {
public:
  /// Iterates `data` (which must outlive the loader) in `order`, batch_size samples a batch.
  /// The last batch is partial unless `drop_last`. Throws std::invalid_argument for a
  /// batch_size of 0 and std::out_of_range for an index >= data.size().
  batch_loader(const dataset& data, std::vector<std::uint32_t> order, std::size_t batch_size,
               bool drop_last = false);

  /// The next batch, or nullptr at the end of the epoch; valid until the next call of next()
  /// or reset().
  const batch* next();

  /// Starts a new epoch in `order` with the same buffer. Throws std::out_of_range for an
  /// index >= data.size().
  void reset(std::vector<std::uint32_t> order);

  /// Batches in one epoch of the current order.
  std::size_t batches_per_epoch() const noexcept { return total_; }
  /// Whether next() has handed out every batch of the epoch.
  bool exhausted() const noexcept { return handed_ >= total_; }

private:
  void check_order(const std::vector<std::uint32_t>& order) const;
  std::size_t count_batches(std::size_t samples) const noexcept;

  const dataset& data_;
  const std::size_t batch_size_;
  const bool drop_last_;
  const std::size_t sample_floats_;
  std::vector<std::uint32_t> order_;
  std::size_t total_ = 0;   // batches in this epoch
  std::size_t handed_ = 0;  // batches returned by next()
  std::vector<float> features_;
  std::vector<std::int32_t> labels_;
  batch view_;
};

} // namespace strom::compute
