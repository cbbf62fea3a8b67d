#pragma once
// Central-difference gradient checks shared by the layer tests: the scalar loss is
// L = sum(output * r) for fixed random r, so dL/d(output) = r is what backward receives.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "strom/compute/layer.hpp"
#include "strom/compute/random.hpp"
#include "support/random_values.hpp"

namespace strom::compute::testing {

/// Makes a fresh layer; called once per loss evaluation, so that a layer drawing random
/// masks (dropout) repeats its mask from its seed every time.
using layer_factory = std::function<std::unique_ptr<layer>()>;

/// How a gradient check runs.
struct gradient_check_options {
  std::size_t batch = 2;
  double epsilon = 1e-2;    ///< central-difference step
  double tolerance = 1e-2;  ///< relative, against max(|analytic|, |numeric|, floor)
  double floor = 0.1;       ///< below this magnitude the tolerance is absolute
  std::uint64_t seed = 7;
};

/// The parameter, gradient and state buffers a checked layer is bound to.
struct layer_buffers {
  std::vector<float> parameters;
  std::vector<float> gradients;
  std::vector<float> state;
};

/// Checks every parameter gradient and every input gradient from backward against central
/// differences of L. Gradients are pre-filled with garbage, so a backward that adds instead
/// of overwriting fails too.
inline void check_gradients(const layer_factory& make, std::vector<float> input,
                            const gradient_check_options& options) {
  const std::size_t batch = options.batch;
  auto probe = make();
  rng gen(options.seed);
  layer_buffers buffers{std::vector<float>(probe->parameter_count()),
                        std::vector<float>(probe->parameter_count()),
                        std::vector<float>(probe->state_count())};
  probe->initialize(buffers.parameters, buffers.state, gen);
  // Move off symmetric starting values (zero biases, unit gamma) so every term matters.
  for (auto& p : buffers.parameters)
    p += gen.uniform(-0.5f, 0.5f);
  // Every pass starts from the same state: a training pass changes some (dropout's count of
  // masks drawn, which picks its mask; batch normalisation's running statistics).
  const std::vector<float> initial_state = buffers.state;
  const std::size_t out_size = batch * probe->output_shape().size();
  const std::vector<float> loss_weights = random_values(out_size, gen);
  std::vector<float> output(out_size);

  auto loss = [&] {
    auto net = make();
    std::vector<float> scratch_gradients(buffers.gradients.size());
    std::vector<float> scratch_state = initial_state;
    net->bind(buffers.parameters, scratch_gradients, scratch_state);
    net->reserve(batch);
    net->forward(input, output, batch, pass::training);
    double total = 0.0;
    for (std::size_t i = 0; i < out_size; ++i)
      total += static_cast<double>(output[i]) * loss_weights[i];
    return total;
  };

  auto net = make();
  std::fill(buffers.gradients.begin(), buffers.gradients.end(), 1e3f);
  net->bind(buffers.parameters, buffers.gradients, buffers.state);
  net->reserve(batch);
  net->forward(input, output, batch, pass::training);
  std::vector<float> input_gradient(input.size(), 1e3f);
  net->backward(input, output, loss_weights, input_gradient, batch);

  std::size_t mismatches = 0;
  auto compare = [&](const char* what, std::size_t index, float& value, double analytic) {
    const float saved = value;
    value = saved + static_cast<float>(options.epsilon);
    const double plus = loss();
    value = saved - static_cast<float>(options.epsilon);
    const double minus = loss();
    value = saved;
    // The step actually taken in float, not the nominal epsilon.
    const double step = static_cast<double>(saved + static_cast<float>(options.epsilon)) -
                        static_cast<double>(saved - static_cast<float>(options.epsilon));
    const double numeric = (plus - minus) / step;
    const double scale = std::max({std::abs(analytic), std::abs(numeric), options.floor});
    if (std::abs(analytic - numeric) > options.tolerance * scale) {
      if (++mismatches <= 10)
        BOOST_ERROR(what << "[" << index << "]: backward " << analytic << ", numeric "
                         << numeric);
    }
  };
  for (std::size_t i = 0; i < buffers.parameters.size(); ++i)
    compare("parameter gradient", i, buffers.parameters[i], buffers.gradients[i]);
  for (std::size_t i = 0; i < input.size(); ++i)
    compare("input gradient", i, input[i], input_gradient[i]);
  BOOST_TEST(mismatches == 0u);
}

} // namespace strom::compute::testing
