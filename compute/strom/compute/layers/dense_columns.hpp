#pragma once
// One block of output columns of a dense layer too large for one node (issue #20, LightDNN's
// model-parallel fully connected layers): the layer's columns [begin, end) of `units`, as
// one link of a chain of blocks that together compute the whole layer. A block's input is the
// layer's input followed by the columns of the blocks before it; it passes both on and adds
// its own columns, and the last block passes only the layer's whole output on. So the blocks
// can be consecutive layers of a pipeline, each on its own node, holding only its columns'
// weights (and their updater state); the layer's input travels along with the columns.
// Parameters are the block's rows of the dense layer's W [units][inputs], then its biases.

#include <cstddef>
#include <span>
#include <string>

#include "strom/compute/layer.hpp"
#include "strom/compute/layers/weight_init.hpp"

namespace strom::compute {

class dense_columns final : public layer {
public:
  /// Columns [begin, end) of a dense layer from `inputs` floats to `units`.
  dense_columns(std::size_t inputs, std::size_t units, std::size_t begin, std::size_t end,
                weight_init init);

  /// "dense_columns".
  std::string kind() const override;
  /// The layer's input and the columns up to `end`; the last block: the `units` columns alone.
  shape output_shape() const override;
  /// (end - begin) * (inputs + 1).
  std::size_t parameter_count() const override;
  /// The weights, not the biases.
  float_range regularized_range() const override;

  /// Draws the block's weights as the dense layer draws its own (fans inputs and units);
  /// biases start at zero.
  void initialize(std::span<float> parameters, std::span<float> state, rng& gen) const override;
  void bind(std::span<float> parameters, std::span<float> gradients,
            std::span<float> state) override;

  /// Copies the input and the earlier columns on (the last block: the earlier columns) and
  /// adds its own: in * W_block^T + b_block.
  void forward(std::span<const float> input, std::span<float> output, batch_rows rows,
               pass mode) override;
  /// dW_block = dcols^T * in, db_block = column sums of dcols; dL/d(input) is the gradient
  /// passed on for the input plus dcols * W_block, and for the earlier columns their part.
  void backward(std::span<const float> input, std::span<const float> output,
                std::span<const float> output_gradient, std::span<float> input_gradient,
                batch_rows rows) override;

  /// Floats of one sample's input: the layer's input and the columns before `begin`.
  std::size_t input_width() const noexcept { return inputs_ + begin_; }
  /// Whether the block ends the layer (its output is the layer's output alone).
  bool last() const noexcept { return end_ == units_; }

private:
  std::size_t inputs_;
  std::size_t units_;
  std::size_t begin_;
  std::size_t end_;
  weight_init init_;
  std::span<float> parameters_;
  std::span<float> gradients_;
};

} // namespace strom::compute
