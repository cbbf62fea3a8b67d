#define BOOST_TEST_MODULE actors_parameter_shard
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/kvstore/kv_pusher.hpp"
#include "strom/actors/kvstore/parameter_shard.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/updaters/sgd.hpp"
#include "support/deterministic_system.hpp"

// Parameter shards on the deterministic coordinator: pushes are sent (not requested), so a
// shard's answer comes back to the test's actor as a plain message once the step merged.

using namespace strom;
using namespace strom::actors;

namespace {

constexpr float rate = 0.5f;
constexpr std::uint64_t node_a = 1;
constexpr std::uint64_t node_b = 2;
const kv_worker worker_a = kv_worker_id(node_a, 0);
const kv_worker worker_b = kv_worker_id(node_b, 0);

/// A shard of key 0 (4 elements, all 1) with plain SGD at `rate`.
parameter_shard_setup shard_setup(kv_sync sync, bool server_optimizer = true) {
  parameter_shard_setup setup;
  setup.range = {0, 0, 0, 0, 4};
  setup.initial = {1.0f, 1.0f, 1.0f, 1.0f};
  setup.rule = std::make_shared<compute::sgd_updater>();
  setup.schedule = compute::learning_rate_schedule::fixed(rate);
  setup.sync = sync;
  setup.server_optimizer = server_optimizer;
  return setup;
}

/// `worker`'s push of `gradient` for step `step` of round 0, in fp32.
kv_push push_of(kv_worker worker, std::uint64_t step, const std::vector<float>& gradient) {
  auto frame = compute::build_update_frame({}, compute::dense_fp32_update(gradient));
  BOOST_REQUIRE(frame.ok());
  return kv_push{worker, 0, step, std::move(*frame)};
}

struct fixture : testing::deterministic_system {
  /// The values of every answer that reached the test's actor, oldest first.
  std::vector<std::vector<float>> answers() {
    sched.run();
    std::vector<std::vector<float>> values;
    bool more = true;
    while (more)
      self->receive(
        [&](const kv_values& answer) {
          compute::frame_workspace ws;
          auto view = compute::read_update_frame(answer.values, ws);
          BOOST_REQUIRE(view.ok());
          std::vector<float> decoded(view->elements, 0.0f);
          BOOST_REQUIRE(compute::apply_update_frame(*view, decoded).ok());
          values.push_back(std::move(decoded));
        },
        caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return values;
  }

  /// Ends `shards`: a chained shard's pending acknowledgement keeps it (and its successor)
  /// alive in virtual time, which the system's destructor would wait for.
  void stop(std::initializer_list<caf::actor> shards) {
    for (const auto& shard : shards)
      self->send_exit(shard, caf::exit_reason::kill);
    sched.run();
  }

  shard_stats stats(const caf::actor& shard) {
    self->send(shard, stats_atom_v);
    sched.run();
    std::optional<shard_stats> got;
    self->receive([&](const shard_stats& s) { got = s; });
    return *got;
  }
};

void check_values(const std::vector<float>& got, const std::vector<float>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::abs(got[i] - want[i]) < 1e-6f, "element " << i << ": " << got[i]);
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(parameter_shard_tests, fixture)

BOOST_AUTO_TEST_CASE(dist_sync_answers_a_step_once_every_worker_pushed_it_with_the_mean_applied) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  self->send(shard, push_of(worker_a, 1, {1, 2, 3, 4}));
  BOOST_TEST(answers().empty());  // worker b holds the step up
  self->send(shard, push_of(worker_b, 1, {3, 2, 1, 0}));
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 2u);  // both pushers answered, with the same values
  check_values(got[0], {0.0f, 0.0f, 0.0f, 0.0f});  // 1 - 0.5 * mean (2, 2, 2, 2)
  check_values(got[1], got[0]);
  BOOST_TEST(stats(shard).updates == 1u);
}

BOOST_AUTO_TEST_CASE(a_node_s_push_of_its_workers_mean_weighs_as_many_workers) {
  // Node a pushes the mean of its 3 workers' gradients (local aggregation), node b one
  // worker's: the step's mean is (3 x 4 + 1 x 0) / 4 = 3, not the mean of the pushes (2).
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  auto three = push_of(worker_a, 1, {4, 4, 4, 4});
  three.weight = 3;
  self->send(shard, std::move(three));
  self->send(shard, push_of(worker_b, 1, {0, 0, 0, 0}));
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 2u);
  check_values(got[0], {-0.5f, -0.5f, -0.5f, -0.5f});  // 1 - 0.5 * 3
}

BOOST_AUTO_TEST_CASE(a_gradient_of_weight_zero_or_above_a_node_s_slots_is_refused_naming_it) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a}});
  for (const std::uint32_t weight : {0u, max_kv_push_weight + 1}) {
    auto push = push_of(worker_a, 1, {1, 1, 1, 1});
    push.weight = weight;
    self->send(shard, std::move(push));
    sched.run();
    std::string refusal;
    self->receive([](const kv_values&) {}, [&](caf::error& err) { refusal = sys.render(err); },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    BOOST_TEST(refusal.find("weight " + std::to_string(weight)) != std::string::npos, refusal);
  }
  BOOST_TEST(stats(shard).rejected == 2u);
  BOOST_TEST(stats(shard).updates == 0u);
}

/// `worker`'s join of step `step` of round 0: weight 0, no gradient.
kv_push join_of(kv_worker worker, std::uint64_t step) {
  return kv_push{worker, 0, step, compute::frame{}, 0};
}

BOOST_AUTO_TEST_CASE(a_join_counts_as_the_worker_s_push_adds_nothing_and_takes_the_answer) {
  // Worker b ran out of batches: it joins step 2, which then merges a's gradient alone and
  // answers both with the same values.
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  self->send(shard, push_of(worker_a, 1, {1, 1, 1, 1}));
  self->send(shard, push_of(worker_b, 1, {1, 1, 1, 1}));
  BOOST_REQUIRE_EQUAL(answers().size(), 2u);
  self->send(shard, push_of(worker_a, 2, {2, 2, 2, 2}));
  BOOST_TEST(answers().empty());  // b holds the step up until it joins
  self->send(shard, join_of(worker_b, 2));
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 2u);
  check_values(got[0], {-0.5f, -0.5f, -0.5f, -0.5f});  // 0.5 - 0.5 * 2: a's mean alone
  check_values(got[1], got[0]);
  BOOST_TEST(stats(shard).updates == 2u);
  BOOST_TEST(stats(shard).pushes == 3u);  // the join is no gradient pushed
}

BOOST_AUTO_TEST_CASE(a_step_of_joins_alone_is_answered_without_an_update) {
  // Every gradient of the step was lost with its node: the joins get the values as they are.
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  self->send(shard, join_of(worker_a, 1));
  BOOST_TEST(answers().empty());
  self->send(shard, forget_atom_v, node_b);
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 1u);
  check_values(got[0], {1.0f, 1.0f, 1.0f, 1.0f});
  BOOST_TEST(stats(shard).updates == 0u);
}

BOOST_AUTO_TEST_CASE(a_join_is_refused_in_dist_async) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_async));
  self->send(shard, join_of(worker_a, 1));
  sched.run();
  std::string refusal;
  self->receive([](const kv_values&) {}, [&](caf::error& err) { refusal = sys.render(err); },
                caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(refusal.find("or 0 for a join without a gradient in dist_sync") != std::string::npos,
             refusal);
  BOOST_TEST(stats(shard).rejected == 1u);
}

BOOST_AUTO_TEST_CASE(a_step_waits_for_the_round_plan_before_it_merges) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, push_of(worker_a, 1, {2, 2, 2, 2}));
  BOOST_TEST(answers().empty());
  self->send(shard, kv_round{0, 0, {worker_a}});
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 1u);
  check_values(got[0], {0.0f, 0.0f, 0.0f, 0.0f});
}

BOOST_AUTO_TEST_CASE(a_worker_that_finished_its_part_with_fewer_steps_holds_up_no_later_step) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  self->send(shard, push_of(worker_a, 1, {1, 1, 1, 1}));
  self->send(shard, push_of(worker_b, 1, {1, 1, 1, 1}));
  BOOST_REQUIRE_EQUAL(answers().size(), 2u);
  self->send(shard, push_of(worker_a, 2, {1, 1, 1, 1}));
  BOOST_TEST(answers().empty());
  self->send(shard, kv_done{worker_b, 0, 1});  // b's partition had one batch
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 1u);
  check_values(got[0], {0.0f, 0.0f, 0.0f, 0.0f});  // 1 - 0.5 - 0.5
}

BOOST_AUTO_TEST_CASE(a_lost_node_s_workers_hold_up_no_step) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  self->send(shard, push_of(worker_a, 1, {2, 2, 2, 2}));
  BOOST_TEST(answers().empty());
  self->send(shard, forget_atom_v, node_b);
  BOOST_REQUIRE_EQUAL(answers().size(), 1u);
}

BOOST_AUTO_TEST_CASE(a_push_seen_before_is_answered_but_not_applied_again) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a}});
  self->send(shard, push_of(worker_a, 1, {1, 1, 1, 1}));
  check_values(answers().at(0), {0.5f, 0.5f, 0.5f, 0.5f});
  self->send(shard, push_of(worker_a, 1, {1, 1, 1, 1}));
  check_values(answers().at(0), {0.5f, 0.5f, 0.5f, 0.5f});
  const auto counted = stats(shard);
  BOOST_TEST(counted.updates == 1u);
  BOOST_TEST(counted.duplicates == 1u);
}

BOOST_AUTO_TEST_CASE(dist_async_applies_every_push_at_once) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_async));
  self->send(shard, push_of(worker_a, 1, {1, 1, 1, 1}));
  check_values(answers().at(0), {0.5f, 0.5f, 0.5f, 0.5f});
  self->send(shard, push_of(worker_b, 1, {1, 0, 1, 0}));
  check_values(answers().at(0), {0.0f, 0.5f, 0.0f, 0.5f});
  BOOST_TEST(stats(shard).updates == 2u);
}

BOOST_AUTO_TEST_CASE(without_the_server_optimizer_the_answer_is_the_mean_gradient) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync, false));
  self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  self->send(shard, push_of(worker_a, 1, {1, 2, 3, 4}));
  self->send(shard, push_of(worker_b, 1, {3, 2, 1, 0}));
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 2u);
  check_values(got[0], {2.0f, 2.0f, 2.0f, 2.0f});
}

BOOST_AUTO_TEST_CASE(a_push_that_does_not_cover_the_range_is_refused_with_the_key_named) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_async));
  self->send(shard, push_of(worker_a, 1, {1, 1, 1}));
  sched.run();
  bool refused = false;
  self->receive([](const kv_values&) {},
                [&](caf::error& err) {
                  refused = true;
                  BOOST_TEST(sys.render(err).find("does not cover key 0 part 0") != std::string::npos,
                             sys.render(err));
                },
                caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(refused);
  BOOST_TEST(stats(shard).rejected == 1u);
}

BOOST_AUTO_TEST_CASE(a_plain_pull_answers_the_values_of_the_latest_merged_step) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  self->send(shard, kv_pull_atom_v);
  check_values(answers().at(0), {1.0f, 1.0f, 1.0f, 1.0f});  // the initial values
  self->send(shard, push_of(worker_a, 1, {2, 2, 2, 2}));
  self->send(shard, kv_pull_atom_v);
  check_values(answers().at(0), {1.0f, 1.0f, 1.0f, 1.0f});  // step 1 waits for worker b
  self->send(shard, push_of(worker_b, 1, {2, 2, 2, 2}));
  BOOST_REQUIRE_EQUAL(answers().size(), 2u);
  self->send(shard, kv_pull_atom_v);
  check_values(answers().at(0), {0.0f, 0.0f, 0.0f, 0.0f});  // 1 - 0.5 * 2
  BOOST_TEST(stats(shard).updates == 1u);
}

BOOST_AUTO_TEST_CASE(fp16_answers_carry_the_parameters_rounded_to_half_precision) {
  auto setup = shard_setup(kv_sync::dist_async);
  setup.fp16_answers = true;
  auto shard = sys.spawn(parameter_shard, std::move(setup));
  self->send(shard, push_of(worker_a, 1, {0.2f, 0.0f, 0.0f, 0.0f}));
  sched.run();
  std::optional<kv_values> answer;
  self->receive([&](const kv_values& got) { answer = got; });
  compute::frame_workspace ws;
  auto view = compute::read_update_frame(answer->values, ws);
  BOOST_REQUIRE(view.ok());
  BOOST_TEST(static_cast<int>(view->enc)
             == static_cast<int>(compute::encoding::dense_fp16));
  std::vector<float> decoded(4, 0.0f);
  BOOST_REQUIRE(compute::apply_update_frame(*view, decoded).ok());
  BOOST_TEST(decoded[0] == 0.89990234375f);  // 1 - 0.5 * 0.2 = 0.9, the nearest half
  BOOST_TEST(decoded[1] == 1.0f);
}

// -- chain replication ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_chained_head_answers_a_step_once_its_successor_committed_the_same_values) {
  auto head = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  auto tail = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  self->send(head, kv_chain_link{1, head, tail});
  for (const auto& shard : {head, tail})
    self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  self->send(head, push_of(worker_a, 1, {1, 2, 3, 4}));
  self->send(head, push_of(worker_b, 1, {3, 2, 1, 0}));
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 2u);
  check_values(got[0], {0.0f, 0.0f, 0.0f, 0.0f});
  BOOST_TEST(stats(tail).updates == 1u);
  // The tail counts the step as committed: a push of it is a duplicate, answered with its values.
  self->send(tail, push_of(worker_a, 1, {9, 9, 9, 9}));
  check_values(answers().at(0), got[0]);
  BOOST_TEST(stats(tail).duplicates == 1u);
  stop({head, tail});
}

BOOST_AUTO_TEST_CASE(a_replica_that_becomes_head_merges_the_lost_heads_unanswered_step_once) {
  auto head = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  auto tail = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));
  auto alone = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_sync));  // the reference
  self->send(head, kv_chain_link{1, head, tail});
  for (const auto& shard : {head, tail, alone})
    self->send(shard, kv_round{0, 0, {worker_a, worker_b}});
  for (const auto& shard : {head, alone}) {
    self->send(shard, push_of(worker_a, 1, {1, 1, 1, 1}));
    self->send(shard, push_of(worker_b, 1, {1, 0, 1, 0}));
  }
  BOOST_REQUIRE_EQUAL(answers().size(), 4u);
  self->send(head, push_of(worker_a, 2, {0, 1, 0, 1}));  // step 2 half pushed, then the head dies
  sched.run();
  self->send_exit(head, caf::exit_reason::kill);
  self->send(tail, kv_chain_link{2, tail, caf::actor{}});
  // Both workers push again to the new head: b's step 1 again (it never saw an answer), then
  // step 2; a's step 2.
  self->send(tail, push_of(worker_b, 1, {1, 0, 1, 0}));
  self->send(tail, push_of(worker_a, 2, {0, 1, 0, 1}));
  self->send(tail, push_of(worker_b, 2, {1, 1, 1, 1}));
  self->send(alone, push_of(worker_a, 2, {0, 1, 0, 1}));
  self->send(alone, push_of(worker_b, 2, {1, 1, 1, 1}));
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 5u);  // b's duplicate, then step 2 twice each
  check_values(got[1], got[3]);
  const auto counted = stats(tail);
  BOOST_TEST(counted.updates == 2u);
  BOOST_TEST(counted.duplicates == 1u);
  stop({tail, alone});
}

BOOST_AUTO_TEST_CASE(a_new_successor_receives_everything_committed_before_it_joined_the_chain) {
  auto head = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_async));
  self->send(head, push_of(worker_a, 1, {1, 1, 1, 1}));
  self->send(head, push_of(worker_a, 2, {1, 0, 0, 0}));
  BOOST_REQUIRE_EQUAL(answers().size(), 2u);
  auto joiner = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_async));
  self->send(head, kv_chain_link{1, head, joiner});
  self->send(head, push_of(worker_a, 3, {0, 0, 0, 2}));
  const auto got = answers();
  BOOST_REQUIRE_EQUAL(got.size(), 1u);
  check_values(got[0], {0.0f, 0.5f, 0.5f, -0.5f});
  BOOST_TEST(stats(joiner).updates == 3u);
  self->send(joiner, push_of(worker_a, 3, {5, 5, 5, 5}));  // committed there: a duplicate
  check_values(answers().at(0), got[0]);
  stop({head, joiner});
}

BOOST_AUTO_TEST_CASE(a_chain_step_from_an_older_chain_configuration_is_refused) {
  auto shard = sys.spawn(parameter_shard, shard_setup(kv_sync::dist_async));
  self->send(shard, kv_chain_link{2, shard, caf::actor{}});
  auto mean = compute::build_update_frame({}, compute::dense_fp32_update(std::vector<float>{1, 1, 1, 1}));
  BOOST_REQUIRE(mean.ok());
  self->send(shard, kv_chain_step{1, 1, 0, 0, 1, {worker_a}, std::move(*mean)});
  sched.run();
  bool refused = false;
  self->receive([&](const caf::error&) { refused = true; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(refused);
  BOOST_TEST(stats(shard).updates == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(two_bit_pushes_carry_a_sixteenth_of_the_dense_bytes_and_keep_a_residual) {
  kv_options options;
  options.compression = kv_compression::two_bit;
  options.shards.push_back({{0, 0, 0, 0, 100'000}, caf::actor{}});
  kv_pusher pusher{options};
  std::vector<float> gradient(100'000, 0.3f);  // below the 0.5 threshold: all stays behind
  auto first = pusher.push(0, worker_a, 0, 1, gradient);
  BOOST_REQUIRE(first.ok());
  auto second = pusher.push(0, worker_a, 0, 2, gradient);  // 0.6 in the residual: sent
  BOOST_REQUIRE(second.ok());
  BOOST_TEST(pusher.traffic().push_bytes <= pusher.traffic().push_dense_bytes * 7 / 100);
  compute::frame_workspace ws;
  auto view = compute::read_update_frame(second->gradient, ws);
  BOOST_REQUIRE(view.ok());
  std::vector<float> sent(100'000, 0.0f);
  BOOST_REQUIRE(compute::apply_update_frame(*view, sent).ok());
  BOOST_TEST(sent[0] == 0.5f);
  BOOST_TEST(sent[99'999] == 0.5f);
}

BOOST_AUTO_TEST_CASE(an_answer_replaces_its_slice_of_the_target_and_nothing_else) {
  kv_options options;
  options.shards.push_back({{0, 0, 0, 0, 2}, caf::actor{}});
  options.shards.push_back({{1, 0, 0, 2, 2}, caf::actor{}});
  kv_pusher pusher{options};
  std::vector<float> target{9, 9, 9, 9};
  const std::vector<float> values{1, 2};
  auto frame = compute::build_update_frame({}, compute::dense_fp32_update(values));
  BOOST_REQUIRE(frame.ok());
  BOOST_REQUIRE(pusher.take(1, kv_values{*frame}, target).ok());
  check_values(target, {9, 9, 1, 2});
  auto wrong = pusher.take(0, kv_values{*frame}, std::span<float>{target}.first(1));
  BOOST_TEST(!wrong.ok());
}
