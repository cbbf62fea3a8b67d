#include "strom/compute/evaluation.hpp"

#include <algorithm>

#include "strom/compute/layers/softmax_cross_entropy.hpp"

namespace strom::compute {

evaluation evaluate(model& net, const dataset& data) {
  evaluation result;
  const std::size_t n = data.size();
  const std::size_t width = net.input_shape().size();
  const std::size_t step = std::max<std::size_t>(1, net.max_batch());
  net.reserve(step);
  double loss_sum = 0.0;
  std::size_t correct = 0;
  for (std::size_t begin = 0; begin < n; begin += step) {
    const std::size_t batch = std::min(step, n - begin);
    auto features = std::span{data.features}.subspan(begin * width, batch * width);
    auto labels = std::span{data.labels}.subspan(begin, batch);
    auto logits = net.predict(features, batch);
    loss_sum += static_cast<double>(softmax_cross_entropy(logits, labels, batch, net.classes(), {}))
                * static_cast<double>(batch);
    correct += count_correct(logits, labels, batch, net.classes());
  }
  result.samples = n;
  if (n > 0) {
    result.loss = loss_sum / static_cast<double>(n);
    result.accuracy = static_cast<double>(correct) / static_cast<double>(n);
  }
  return result;
}

} // namespace strom::compute
