#define BOOST_TEST_MODULE compute_stage_regroup
#include <boost/test/unit_test.hpp>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/pipeline/stage_regroup.hpp"
#include "strom/compute/pipeline/stage_replica.hpp"
#include "strom/runtime/job/job_spec.hpp"

// A re-partitioned pipeline's stages get their layers' parameters, Adam's two moment blocks
// and batch-norm statistics from the old stages' snapshots, whatever the old and new splits.

using namespace strom;
using namespace strom::compute;

namespace {

runtime::job_spec adam_cnn() {
  const std::string text = R"((
  name = "regroup",
  network = (
    input = (channels = 2, height = 6, width = 6),
    layers = [
    (convolution = (filters = 3, kernel = 3, activation = relu)),
    (batchNormalization = ()),
    (dense = (units = 5, activation = tanh)),
    (output = (units = 3))]
  ),
  data = (train = (csv = (path = "unused.csv"))),
  training = (epochs = 1, batchSize = 4, seed = 5, updater = (learningRate = 0.1, adam = ()))
))";
  auto job = runtime::parse_job_text(text, "regroup.job", "/");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  return std::move(*job);
}

struct network {
  runtime::job_spec job = adam_cnn();
  std::vector<layer_size> sizes;
  replica_snapshot whole;  // every float numbered, so each one's place can be checked

  network() {
    auto layers = make_layers(job.reader().getNetwork(), 0);
    BOOST_REQUIRE(layers.ok());
    sizes = layer_sizes_of(*layers);
    auto stage = stage_of({0, sizes.size()});
    auto& core = stage->core();
    auto fill = [next = 1.0f](std::span<float> values) mutable {
      for (auto& v : values)
        v = next++;
    };
    fill(core.net().parameters());
    fill(core.updater_state());
    fill(core.net().state());
    core.set_progress(7, 1);
    whole = take_snapshot(core, nullptr, {1, 7, 0, 0, {}});
  }

  std::unique_ptr<stage_replica> stage_of(layer_range range) {
    auto built = make_stage_replica(job.reader(), range);
    BOOST_REQUIRE_MESSAGE(built.ok(), (built.ok() ? "" : built.err().message));
    return std::move(*built);
  }

  replica_snapshot regroup(layer_range target, std::vector<stage_source> sources) {
    auto out = regroup_stage(sizes, target, sources);
    BOOST_REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.err().message));
    return std::move(*out);
  }
};

void check_equal(const replica_snapshot& got, const replica_snapshot& want) {
  BOOST_TEST(got.parameters == want.parameters, boost::test_tools::per_element());
  BOOST_TEST(got.updater_state == want.updater_state, boost::test_tools::per_element());
  BOOST_TEST(got.layer_state == want.layer_state, boost::test_tools::per_element());
  BOOST_TEST(got.progress.iteration == want.progress.iteration);
  BOOST_TEST(got.progress.epoch == want.progress.epoch);
}

} // namespace

BOOST_AUTO_TEST_CASE(a_stage_takes_its_layers_share_of_every_section_and_fits_its_replica) {
  network net;
  const layer_range front{0, 3};
  auto part = net.regroup(front, {{{0, net.sizes.size()}, &net.whole}});
  std::size_t parameters = 0;
  std::size_t state = 0;
  for (std::size_t l = front.first; l < front.end; ++l) {
    parameters += net.sizes[l].parameters;
    state += net.sizes[l].state;
  }
  BOOST_REQUIRE_GT(parameters, 0u);
  BOOST_REQUIRE_GT(state, 0u);  // the batch norm's statistics
  const auto all = net.whole.parameters.size();
  const std::vector<float> first(net.whole.parameters.begin(),
                                 net.whole.parameters.begin() + parameters);
  BOOST_TEST(part.parameters == first, boost::test_tools::per_element());
  // Adam's m of the stage's parameters, then its v: each a slice of the whole's block.
  std::vector<float> moments(net.whole.updater_state.begin(),
                             net.whole.updater_state.begin() + parameters);
  moments.insert(moments.end(), net.whole.updater_state.begin() + all,
                 net.whole.updater_state.begin() + all + parameters);
  BOOST_TEST(part.updater_state == moments, boost::test_tools::per_element());
  BOOST_TEST(part.layer_state.size() == state);
  BOOST_TEST(part.progress.iteration == 7u);
  // It is exactly what a stage of those layers holds.
  auto stage = net.stage_of(front);
  BOOST_TEST(apply_snapshot(part, stage->core(), nullptr).ok());
  BOOST_TEST(stage->core().iteration() == 7u);
}

BOOST_AUTO_TEST_CASE(any_old_split_regroups_into_any_new_split_and_back_into_the_whole) {
  network net;
  const auto n = net.sizes.size();
  for (std::size_t old_split = 1; old_split < n; ++old_split) {
    auto a = net.regroup({0, old_split}, {{{0, n}, &net.whole}});
    auto b = net.regroup({old_split, n}, {{{0, n}, &net.whole}});
    const std::vector<stage_source> old{{{old_split, n}, &b}, {{0, old_split}, &a}};
    check_equal(net.regroup({0, n}, old), net.whole);
    for (std::size_t new_split = 1; new_split < n; ++new_split) {
      check_equal(net.regroup({0, new_split}, old),
                  net.regroup({0, new_split}, {{{0, n}, &net.whole}}));
      check_equal(net.regroup({new_split, n}, old),
                  net.regroup({new_split, n}, {{{0, n}, &net.whole}}));
    }
  }
}

BOOST_AUTO_TEST_CASE(sources_that_do_not_fit_their_layers_or_each_other_are_refused_by_name) {
  network net;
  const auto n = net.sizes.size();
  auto a = net.regroup({0, 2}, {{{0, n}, &net.whole}});
  auto b = net.regroup({2, n}, {{{0, n}, &net.whole}});
  const auto message = [&](layer_range target, std::vector<stage_source> sources) {
    auto out = regroup_stage(net.sizes, target, sources);
    BOOST_REQUIRE(!out.ok());
    return out.err().message;
  };
  BOOST_TEST(message({0, n}, {{{0, 2}, &a}}).find("no snapshot holds layer 2") != std::string::npos);
  BOOST_TEST(message({0, n}, {{{0, 3}, &a}, {{3, n}, &b}}).find("layers [0, 3)")
             != std::string::npos);
  auto later = b;
  later.progress.iteration = 8;
  BOOST_TEST(message({0, n}, {{{0, 2}, &a}, {{2, n}, &later}}).find("different steps")
             != std::string::npos);
  auto torn = b;
  torn.updater_state.pop_back();
  BOOST_TEST(message({0, n}, {{{0, 2}, &a}, {{2, n}, &torn}}).find("updater state")
             != std::string::npos);
  BOOST_TEST(message({1, n + 1}, {{{0, n}, &net.whole}}).find("are not a stage")
             != std::string::npos);
  BOOST_TEST(message({0, n}, {}).find("no snapshot") != std::string::npos);
}
