#define BOOST_TEST_MODULE updaters_momentum_state
#include <boost/test/unit_test.hpp>

#include <memory>
#include <vector>

#include "strom/compute/updaters/ada_grad.hpp"
#include "strom/compute/updaters/adam.hpp"
#include "strom/compute/updaters/momentum.hpp"
#include "strom/compute/updaters/nesterov.hpp"
#include "strom/compute/updaters/rms_prop.hpp"
#include "strom/compute/updaters/sgd.hpp"

using namespace strom::compute;

// updater::momentum is what momentum factor masking clears: it must be exactly the state
// that carries a past gradient into later updates. Checked by behaviour: after one step on
// a gradient, an element whose momentum is cleared gets no update from a zero gradient,
// while the others keep moving.
BOOST_AUTO_TEST_CASE(clearing_the_momentum_stops_what_past_gradients_would_still_move) {
  std::vector<std::unique_ptr<updater>> with_momentum;
  with_momentum.push_back(std::make_unique<adam_updater>());
  with_momentum.push_back(std::make_unique<momentum_updater>());
  with_momentum.push_back(std::make_unique<nesterov_updater>());
  for (const auto& rule : with_momentum) {
    constexpr std::size_t n = 3;
    std::vector<float> state(rule->state_size(n));
    rule->initialize_state(state);
    std::vector<float> gradient{1.0f, -2.0f, 0.5f};
    rule->compute_update(gradient, state, {.iteration = 0, .epoch = 0, .learning_rate = 0.1f});
    const auto momentum = rule->momentum(state, n);
    BOOST_REQUIRE(momentum.size() == n);
    BOOST_TEST(momentum.data() == state.data());
    momentum[1] = 0.0f;
    std::vector<float> zero(n, 0.0f);
    rule->compute_update(zero, state, {.iteration = 1, .epoch = 0, .learning_rate = 0.1f});
    BOOST_TEST(zero[0] > 0.0f);
    BOOST_TEST(zero[1] == 0.0f);
    BOOST_TEST(zero[2] > 0.0f);
  }
}

BOOST_AUTO_TEST_CASE(updaters_without_momentum_have_none_to_clear) {
  std::vector<float> state(6, 0.0f);
  BOOST_TEST(sgd_updater{}.momentum(state, 3).empty());
  BOOST_TEST(ada_grad_updater{}.momentum(state, 3).empty());
  BOOST_TEST(rms_prop_updater{}.momentum(state, 3).empty());
}
