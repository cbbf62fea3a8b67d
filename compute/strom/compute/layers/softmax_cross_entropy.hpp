#pragma once
// The output loss: softmax over each sample's logits followed by cross-entropy against an
// integer label, fused so that the gradient is the stable (softmax - onehot) / batch.

#include <cstddef>
#include <cstdint>
#include <span>

namespace strom::compute {

/// Mean cross-entropy of softmax(logits) against `labels` over the batch (logits laid out
/// [batch][classes]); when `logits_gradient` is not empty it receives dL/d(logits) =
/// (softmax - onehot) / batch. A label outside [0, classes) throws std::out_of_range (the
/// data reader validates labels, so this is a broken invariant).
float softmax_cross_entropy(std::span<const float> logits, std::span<const std::int32_t> labels,
                            std::size_t batch, std::size_t classes,
                            std::span<float> logits_gradient);

/// Samples whose largest logit (the first one on ties) is at their label.
std::size_t count_correct(std::span<const float> logits, std::span<const std::int32_t> labels,
                          std::size_t batch, std::size_t classes);

} // namespace strom::compute
