#include "strom/actors/sharing/node_framer.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace strom::actors {

node_framer::node_framer(std::uint64_t node_id, std::uint32_t workers, std::size_t elements,
                         compute::frame_options options)
  : node_id_(node_id),
    elements_(elements),
    options_(options),
    finished_(workers, 0),
    included_(workers, 0),
    tensors_(workers) {
}

result<framed_update> node_framer::frame(std::uint32_t worker, std::uint32_t epoch,
                                         const compute::encoded_update& update) {
  if (update.elements != elements_)
    return error{fmt::format("update from worker {} covers {} elements, expected {}", worker,
                             update.elements, elements_)};
  if (update.enc != compute::encoding::threshold && update.enc != compute::encoding::bitmap
      && update.enc != compute::encoding::blocks)
    return error{fmt::format("update from worker {} has encoding {}, expected threshold, bitmap "
                             "or blocks", worker, static_cast<int>(update.enc))};
  if ((update.values == 0) != update.payload.empty())
    return error{fmt::format("update from worker {} carries {} values in {} payload bytes", worker,
                             update.values, update.payload.size())};
  std::lock_guard lock{mutex_};
  if (worker >= included_.size())
    return error{fmt::format("update from worker {}, but the node has {} workers", worker,
                             included_.size())};
  ++included_[worker];
  const compute::frame_header header{node_id_, worker, next_sequence_, clock(), epoch, 0};
  auto built = compute::build_update_frame(header, update, options_);
  if (!built) {
    --included_[worker];
    return built.err();
  }
  ++next_sequence_;
  ++stats_.updates;
  if (update.values > 0)
    ++stats_.frames_sent;
  stats_.bytes_sent += built->size();
  stats_.dense_bytes_equivalent += sizeof(float) * elements_;
  stats_.density_sum += static_cast<double>(update.values) / static_cast<double>(elements_);
  stats_.threshold = update.threshold;
  return framed_update{std::move(*built), header};
}

void node_framer::count_kv(std::uint64_t push_bytes, std::uint64_t push_dense_bytes,
                           std::uint64_t pull_bytes) {
  std::lock_guard lock{mutex_};
  stats_.push_bytes += push_bytes;
  stats_.push_dense_bytes += push_dense_bytes;
  stats_.pull_bytes += pull_bytes;
}

void node_framer::count_average() {
  std::lock_guard lock{mutex_};
  ++stats_.averages;
}

bool node_framer::finish(std::uint32_t worker) {
  std::lock_guard lock{mutex_};
  finished_.at(worker) = 1;
  if (std::count(finished_.begin(), finished_.end(), 1)
      != static_cast<std::ptrdiff_t>(finished_.size()))
    return false;
  std::fill(finished_.begin(), finished_.end(), 0);
  std::fill(included_.begin(), included_.end(), 0);
  return true;
}

void node_framer::note_tensors(std::uint32_t worker, const std::vector<tensor_sharing>& figures) {
  std::lock_guard lock{mutex_};
  if (worker < tensors_.size())
    tensors_[worker] = figures;
}

framing_stats node_framer::stats() const {
  std::lock_guard lock{mutex_};
  framing_stats stats = stats_;
  for (const auto& worker : tensors_)
    add_tensors(stats.tensors, worker);
  return stats;
}

std::uint64_t node_framer::clock() const {
  std::uint64_t slowest = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t most = 0;
  for (std::size_t w = 0; w < included_.size(); ++w) {
    most = std::max(most, included_[w]);
    if (!finished_[w])
      slowest = std::min(slowest, included_[w]);
  }
  return slowest == std::numeric_limits<std::uint64_t>::max() ? most : slowest;
}

} // namespace strom::actors
