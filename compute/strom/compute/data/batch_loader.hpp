#pragma once
// A batch iterator over a dataset in a given sample order. One background thread gathers the
// next batches into a small ring of buffers, allocated once, while the caller trains on the
// current one.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "strom/compute/data/dataset.hpp"

namespace strom::compute {

/// Samples gathered contiguously: features [size][sample floats] and one label each.
struct batch {
  std::span<const float> features;        ///< size * sample_shape.size() floats
  std::span<const std::int32_t> labels;   ///< size labels
  std::size_t size = 0;                   ///< samples in this batch
};

/// Iterates batches of a dataset in a given order, prefetching on one background thread.
/// Single consumer: next() and reset() are called from one thread.
class batch_loader {
public:
  /// Ring slots: the consumer holds one batch while the thread fills up to two ahead.
  static constexpr std::size_t slots = 3;

  /// Iterates `data` (which must outlive the loader) in `order`, batch_size samples a batch.
  /// The last batch is partial unless `drop_last`. Throws std::invalid_argument for a
  /// batch_size of 0 and std::out_of_range for an index >= data.size().
  batch_loader(const dataset& data, std::vector<std::uint32_t> order, std::size_t batch_size,
               bool drop_last = false);
  /// Stops the thread, waiting at most for the batch it is gathering.
  ~batch_loader();

  batch_loader(const batch_loader&) = delete;
  batch_loader& operator=(const batch_loader&) = delete;

  /// The next batch, or nullptr at the end of the epoch; valid until the next call of next()
  /// or reset().
  const batch* next();

  /// Starts a new epoch in `order` on the same thread and buffers; the batch last returned by
  /// next() becomes invalid. Throws std::out_of_range for an index >= data.size().
  void reset(std::vector<std::uint32_t> order);

  /// Batches in one epoch of the current order.
  std::size_t batches_per_epoch() const noexcept { return total_; }

private:
  /// One ring buffer: its storage and the batch view handed out.
  struct slot {
    std::vector<float> features;
    std::vector<std::int32_t> labels;
    batch view;
  };

  void check_order(const std::vector<std::uint32_t>& order) const;
  std::size_t count_batches(std::size_t samples) const noexcept;
  void fill(slot& target, std::size_t batch_index);
  void produce();

  const dataset& data_;
  const std::size_t batch_size_;
  const bool drop_last_;
  const std::size_t sample_floats_;
  slot ring_[slots];

  // -- shared with the producer thread, guarded by mutex_ ---------------------------------
  std::mutex mutex_;
  std::condition_variable changed_;  // any of the counters or flags below changed
  std::vector<std::uint32_t> order_; // not modified while filling_
  std::size_t total_ = 0;            // batches in this epoch
  std::size_t produced_ = 0;         // batches gathered so far this epoch
  std::size_t handed_ = 0;           // batches returned by next()
  std::size_t released_ = 0;         // batches whose slot the consumer gave back
  bool filling_ = false;             // the producer is gathering outside the lock; reset()
                                     // waits for it to finish before replacing order_
  bool stop_ = false;

  std::thread producer_;  // last member: started after everything it uses exists
};

} // namespace strom::compute
