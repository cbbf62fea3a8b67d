#include "strom/compute/parameter_blocks.hpp"

namespace strom::compute {

std::vector<model_tensor> model_tensors(const model& net) {
  std::vector<model_tensor> tensors;
  const auto slices = net.slices();
  const auto layers = net.layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::size_t offset = slices[i].parameter_offset;
    const std::size_t count = slices[i].parameter_count;
    const float_range weights = layers[i]->regularized_range();
    const auto layer = static_cast<std::uint32_t>(i);
    const auto add = [&](std::size_t begin, std::size_t end, bool are_weights) {
      if (end > begin)
        tensors.push_back({{offset + begin, end - begin}, layer, are_weights});
    };
    // The weights' range lies within the layer's parameters; what is around it is the rest.
    add(0, weights.begin, false);
    add(weights.begin, weights.end, true);
    add(weights.end > weights.begin ? weights.end : 0, count, false);
  }
  return tensors;
}

std::vector<parameter_block> parameter_blocks(const model& net) {
  std::vector<parameter_block> blocks;
  for (const auto& tensor : model_tensors(net))
    blocks.push_back(tensor.block);
  return blocks;
}

} // namespace strom::compute
