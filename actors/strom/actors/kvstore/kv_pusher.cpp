#include "strom/actors/kvstore/kv_pusher.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "strom/compute/codecs/dense_codec.hpp"

namespace strom::actors {

namespace {

/// Whether `range` lies inside a model of `parameters` floats (the shards the job_master
/// sent are outside input).
result<void> fits_model(const compute::key_range& range, std::size_t parameters) {
  if (range.offset > parameters || range.count > parameters - range.offset)
    return error{fmt::format("kvstore: key {} part {} lies outside the model's {} parameters",
                             range.key, range.part, parameters)};
  return success();
}

} // namespace

const char* to_string(kv_compression compression) noexcept {
  switch (compression) {
    case kv_compression::none: return "none";
    case kv_compression::two_bit: return "2bit";
    case kv_compression::threshold: return "threshold";
  }
  return "unknown";
}

kv_pusher::kv_pusher(const kv_options& options) {
  for (const auto& ref : options.shards) {
    ranges_.push_back(ref.range);
    switch (options.compression) {
      case kv_compression::none: encoders_.emplace_back(); break;
      case kv_compression::two_bit:
        encoders_.emplace_back(std::in_place_type<compute::two_bit_encoder>, ref.range.count,
                               options.two_bit);
        break;
      case kv_compression::threshold:
        encoders_.emplace_back(std::in_place_type<compute::threshold_encoder>, ref.range.count,
                               options.threshold);
        break;
    }
  }
}

result<kv_push> kv_pusher::push(std::size_t index, kv_worker worker, std::uint32_t round,
                                std::uint64_t step, std::span<const float> gradients,
                                std::uint32_t weight) {
  const auto& range = ranges_.at(index);
  if (auto fits = fits_model(range, gradients.size()); !fits)
    return fits.err();
  const auto slice = gradients.subspan(range.offset, range.count);
  compute::encoded_update update = compute::dense_fp32_update(slice);
  if (auto* two_bit = std::get_if<compute::two_bit_encoder>(&encoders_[index])) {
    update = two_bit->encode(slice);
  } else if (auto* threshold = std::get_if<compute::threshold_encoder>(&encoders_[index])) {
    const auto encoded = threshold->encode(slice);
    // Nothing reached the threshold: an empty message still counts as the step's push.
    update = encoded ? *encoded
                     : compute::encoded_update{compute::encoding::threshold,
                                               threshold->threshold(), range.count, 0, {}};
  }
  compute::frame_header header;
  header.origin_node = kv_node_of(worker);
  header.worker = kv_slot_of(worker);
  header.sequence = step;
  header.iteration = step;
  header.epoch = round;
  auto frame = compute::build_update_frame(header, update);
  if (!frame)
    return error{fmt::format("kvstore push of key {} part {}: {}", range.key, range.part,
                             frame.err().message)};
  traffic_.push_bytes += frame->size();
  traffic_.push_dense_bytes += range.count * sizeof(float);
  return kv_push{worker, round, step, std::move(*frame), weight};
}

result<void> kv_pusher::take(std::size_t index, const kv_values& answer,
                             std::span<float> target) {
  auto taken = take_kv_values(ranges_.at(index), answer.values, target, workspace_, scratch_);
  if (taken)
    count_answer(answer);
  return taken;
}

namespace {

/// Decodes `view`, a frame of exactly `count` elements at offset 0 (what a shard sends of
/// its range), into `scratch`.
result<void> decode_range(const compute::key_range& range,
                          const compute::update_frame_view& view, std::size_t count,
                          std::vector<float>& scratch) {
  if (view.header.offset != 0 || view.elements != count)
    return error{fmt::format("the answer for key {} part {} covers {} elements, not {}",
                             range.key, range.part, view.elements, count)};
  scratch.assign(count, 0.0f);
  return compute::apply_update_frame(view, scratch);
}

} // namespace

result<void> take_kv_values(const compute::key_range& range, const compute::frame& values,
                            std::span<float> target, compute::frame_workspace& workspace,
                            std::vector<float>& scratch) {
  if (auto fits = fits_model(range, target.size()); !fits)
    return fits.err();
  auto view = compute::read_update_frame(values, workspace);
  if (!view)
    return view.err();
  // Decoded aside first: a payload that fails to decode leaves the target as it was.
  if (auto decoded = decode_range(range, *view, range.count, scratch); !decoded)
    return decoded.err();
  std::copy(scratch.begin(), scratch.end(), target.begin() + range.offset);
  return success();
}

result<void> take_kv_state(const compute::key_range& range, const compute::frame& state,
                           std::span<float> target, std::size_t parameters,
                           compute::frame_workspace& workspace, std::vector<float>& scratch) {
  if (auto fits = fits_model(range, parameters); !fits)
    return fits.err();
  const std::size_t blocks = parameters == 0 ? 0 : target.size() / parameters;
  auto view = compute::read_update_frame(state, workspace);
  if (!view)
    return view.err();
  if (blocks == 0 || view->elements == 0)
    return success();  // an updater without state (plain SGD) on either side
  if (auto decoded = decode_range(range, *view, blocks * range.count, scratch); !decoded)
    return decoded.err();
  for (std::size_t b = 0; b < blocks; ++b)
    std::copy_n(scratch.begin() + static_cast<std::ptrdiff_t>(b * range.count), range.count,
                target.begin() + static_cast<std::ptrdiff_t>(b * parameters + range.offset));
  return success();
}

} // namespace strom::actors
