#define BOOST_TEST_MODULE runtime_kv_client
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <capnp/message.h>
#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"
#include "strom/runtime/job/capnp_text_file.hpp"
#include "strom/strom.hpp"

// strom::kv_store and strom::kv_client in a real actor system: parameter shards and client
// agents on CAF's threads, each rank's calls made from its own host thread where the
// behaviour is about ranks meeting.

using namespace strom;
using namespace std::chrono_literals;

namespace {

/// Long enough for any call of these tests on a loaded machine; a call that takes it hung.
constexpr auto call_wait = 20s;

/// SGD's rate in the tests: halves are exact in floats.
constexpr const char* sgd_half = "(learningRate = 0.5, sgd = void)";

struct fixture {
  runtime::system_config config{false, 2};
  caf::actor_system system{config};

  static kv_store_options options(std::uint32_t workers,
                                  actors::kv_sync sync = actors::kv_sync::dist_sync) {
    kv_store_options o;
    o.workers = workers;
    o.sync = sync;
    o.updater = sgd_half;
    return o;
  }
};

/// Waits (bounded) for `call` and requires it to have succeeded.
void require_ok(std::future<void> call) {
  BOOST_REQUIRE(call.wait_for(call_wait) == std::future_status::ready);
  BOOST_REQUIRE_NO_THROW(call.get());
}

/// Waits (bounded) for `call` and returns its error's text ("" when it succeeded).
std::string error_of(std::future<void> call) {
  BOOST_REQUIRE(call.wait_for(call_wait) == std::future_status::ready);
  try {
    call.get();
  } catch (const std::exception& e) {
    BOOST_TEST_MESSAGE(e.what());
    return e.what();
  }
  return "";
}

/// Whether `text` holds every one of `parts`.
bool names_all(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& part : parts)
    if (text.find(part) == std::string::npos)
      return false;
  return true;
}

void check_values(const std::vector<float>& got, const std::vector<float>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(got[i] == want[i], "value " << i << ": " << got[i] << ", want " << want[i]);
}

/// The key's values as rank `kv` pulls them.
std::vector<float> pulled(kv_client& kv, std::uint32_t key, std::size_t values) {
  std::vector<float> out(values, -99.0f);
  require_ok(kv.pull(key, out));
  return out;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(kv_client_tests, fixture)

BOOST_AUTO_TEST_CASE(a_pull_after_init_gives_the_initial_values) {
  kv_store store{system, options(1)};
  auto kv = store.client(0);
  require_ok(kv.init(3, std::vector<float>{1.0f, 2.0f, 3.0f}));
  check_values(pulled(kv, 3, 3), {1.0f, 2.0f, 3.0f});
}

BOOST_AUTO_TEST_CASE(dist_sync_takes_one_sgd_step_on_the_mean_of_every_rank_s_push) {
  constexpr std::uint32_t ranks = 3;
  kv_store store{system, options(ranks)};
  std::vector<std::vector<float>> seen(ranks);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < ranks; ++rank)
    threads.emplace_back([&, rank, kv = store.client(rank)]() mutable {
      require_ok(kv.init(0, std::vector<float>{1.0f, 1.0f, 1.0f, 1.0f}));
      // Ranks push 1, 2, 3 everywhere: the mean is 2, one step of 0.5 gives 1 - 1 = 0.
      const float g = static_cast<float>(rank + 1);
      require_ok(kv.push(0, std::vector<float>{g, g, g, g}));
      seen[rank] = pulled(kv, 0, 4);
    });
  for (auto& t : threads)
    t.join();
  for (const auto& values : seen)
    check_values(values, {0.0f, 0.0f, 0.0f, 0.0f});
  caf::scoped_actor self{system};
  self->request(store.shards(0).at(0), call_wait, actors::stats_atom_v)
    .receive([](const actors::shard_stats& stats) { BOOST_TEST(stats.updates == 1u); },
             [](const caf::error&) { BOOST_FAIL("the shard did not answer stats_atom"); });
}

BOOST_AUTO_TEST_CASE(a_pull_made_right_after_a_push_waits_for_that_push_s_step) {
  kv_store store{system, options(2)};
  auto first = store.client(0);
  auto second = store.client(1);
  require_ok(first.init(0, std::vector<float>{1.0f, 1.0f}));
  std::vector<float> out(2, -99.0f);
  auto push = first.push(0, std::vector<float>{2.0f, 2.0f});
  auto pull = first.pull(0, out);  // queued behind the push, which waits for rank 1
  BOOST_TEST((pull.wait_for(200ms) == std::future_status::timeout));
  require_ok(second.push(0, std::vector<float>{0.0f, 0.0f}));
  require_ok(std::move(push));
  require_ok(std::move(pull));
  check_values(out, {0.5f, 0.5f});  // 1 - 0.5 * mean(2, 0)
}

BOOST_AUTO_TEST_CASE(pushes_made_without_waiting_merge_step_by_step_in_the_order_made) {
  constexpr std::uint32_t ranks = 2;
  constexpr int steps = 3;
  kv_store store{system, options(ranks)};
  std::vector<std::vector<float>> seen(ranks);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < ranks; ++rank)
    threads.emplace_back([&, rank, kv = store.client(rank)]() mutable {
      require_ok(kv.init(0, std::vector<float>{8.0f}));
      // Step s pushes s on rank 0 and 3s on rank 1: mean 2s, so 0.5 * 2s = s comes off.
      std::vector<std::future<void>> pushes;
      const int factor = rank == 0 ? 1 : 3;
      for (int s = 1; s <= steps; ++s)
        pushes.push_back(kv.push(0, std::vector<float>{static_cast<float>(s * factor)}));
      std::vector<float> out(1);
      auto pull = kv.pull(0, out);  // after all three steps of this rank
      for (auto& push : pushes)
        require_ok(std::move(push));
      require_ok(std::move(pull));
      seen[rank] = out;
    });
  for (auto& t : threads)
    t.join();
  for (const auto& values : seen)
    check_values(values, {2.0f});  // 8 - 1 - 2 - 3
}

BOOST_AUTO_TEST_CASE(without_the_server_optimizer_a_pull_gives_the_mean_gradient) {
  auto o = options(2);
  o.server_optimizer = false;
  kv_store store{system, o};
  auto first = store.client(0);
  auto second = store.client(1);
  require_ok(first.init(0, std::vector<float>{1.0f, 1.0f}));
  auto a = first.push(0, std::vector<float>{1.0f, 2.0f});
  auto b = second.push(0, std::vector<float>{3.0f, 6.0f});
  require_ok(std::move(a));
  require_ok(std::move(b));
  check_values(pulled(first, 0, 2), {2.0f, 4.0f});
}

BOOST_AUTO_TEST_CASE(dist_async_takes_one_step_per_push) {
  kv_store store{system, options(2, actors::kv_sync::dist_async)};
  auto first = store.client(0);
  auto second = store.client(1);
  require_ok(first.init(0, std::vector<float>{1.0f, 1.0f}));
  require_ok(first.push(0, std::vector<float>{1.0f, 0.0f}));  // no wait for rank 1
  check_values(pulled(first, 0, 2), {0.5f, 1.0f});
  require_ok(second.push(0, std::vector<float>{1.0f, 1.0f}));
  check_values(pulled(second, 0, 2), {0.0f, 0.5f});
}

BOOST_AUTO_TEST_CASE(adam_on_the_server_gives_the_parameters_adam_gives_locally) {
  const std::string adam = "(learningRate = 0.01, adam = ())";
  auto o = options(1);
  o.updater = adam;
  kv_store store{system, o};
  auto kv = store.client(0);
  std::vector<float> local{0.5f, -0.25f, 2.0f};
  require_ok(kv.init(0, local));
  const std::vector<std::vector<float>> gradients{{0.1f, -0.2f, 0.3f}, {1.0f, 0.0f, -1.0f}};
  for (const auto& g : gradients)
    require_ok(kv.push(0, g));

  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::Updater>();
  BOOST_REQUIRE(runtime::decode_capnp_text(adam, "adam", {"updater", 1024, 8, 4},
                                           capnp::toDynamic(spec)).ok());
  auto rule = compute::make_updater(spec.asReader());
  auto schedule = compute::make_schedule(spec.asReader());
  BOOST_REQUIRE(rule.ok());
  BOOST_REQUIRE(schedule.ok());
  std::vector<float> state((*rule)->state_size(local.size()));
  (*rule)->initialize_state(state);
  for (std::uint64_t step = 0; step < gradients.size(); ++step) {
    auto g = gradients[step];
    (*rule)->apply_step(g, state, {step, 0, schedule->rate_at(step, 0)}, local);
  }
  check_values(pulled(kv, 0, 3), local);  // the same kernel on the same numbers: bit for bit
}

BOOST_AUTO_TEST_CASE(a_key_of_big_array_bound_values_is_split_over_two_shards_and_round_trips) {
  auto o = options(1);
  o.servers = 2;
  o.big_array_bound = 8;
  kv_store store{system, o};
  auto kv = store.client(0);
  std::vector<float> initial(11);
  for (std::size_t i = 0; i < initial.size(); ++i)
    initial[i] = static_cast<float>(i);
  require_ok(kv.init(5, initial));
  BOOST_TEST(store.shards(5).size() == 2u);
  check_values(pulled(kv, 5, 11), initial);
  require_ok(kv.push(5, std::vector<float>(11, 2.0f)));
  for (auto& v : initial)
    v -= 1.0f;
  check_values(pulled(kv, 5, 11), initial);
}

BOOST_AUTO_TEST_CASE(two_bit_pushes_arrive_quantized_at_the_threshold) {
  auto o = options(1);
  o.server_optimizer = false;
  o.compression = actors::kv_compression::two_bit;
  o.two_bit_threshold = 0.5f;
  kv_store store{system, o};
  auto kv = store.client(0);
  require_ok(kv.init(0, std::vector<float>(4, 0.0f)));
  require_ok(kv.push(0, std::vector<float>{1.0f, -0.7f, 0.2f, 0.0f}));
  check_values(pulled(kv, 0, 4), {0.5f, -0.5f, 0.0f, 0.0f});
  // The residual (0.5, -0.2, 0.2, 0) stays with the client and goes out with the next push.
  require_ok(kv.push(0, std::vector<float>{0.0f, 0.0f, 0.3f, 0.0f}));
  check_values(pulled(kv, 0, 4), {0.5f, 0.0f, 0.5f, 0.0f});
}

BOOST_AUTO_TEST_CASE(a_push_of_an_unknown_key_is_refused_naming_the_key) {
  kv_store store{system, options(1)};
  auto kv = store.client(0);
  const auto text = error_of(kv.push(9, std::vector<float>(3, 1.0f)));
  BOOST_TEST(names_all(text, {"rank 0", "push of key 9", "3 values", "no such key"}), text);
}

BOOST_AUTO_TEST_CASE(a_push_of_the_wrong_length_is_refused_naming_both_sizes) {
  kv_store store{system, options(1)};
  auto kv = store.client(0);
  require_ok(kv.init(2, std::vector<float>(4, 1.0f)));
  const auto text = error_of(kv.push(2, std::vector<float>(5, 1.0f)));
  BOOST_TEST(names_all(text, {"push of key 2", "5 values", "holds 4 values"}), text);
}

BOOST_AUTO_TEST_CASE(a_pull_into_a_buffer_of_the_wrong_length_is_refused_naming_both_sizes) {
  kv_store store{system, options(1)};
  auto kv = store.client(0);
  require_ok(kv.init(2, std::vector<float>(4, 1.0f)));
  std::vector<float> out(3);
  const auto text = error_of(kv.pull(2, out));
  BOOST_TEST(names_all(text, {"pull of key 2", "3 values", "holds 4 values"}), text);
}

BOOST_AUTO_TEST_CASE(a_second_init_of_another_size_is_refused_and_one_of_the_same_size_kept) {
  kv_store store{system, options(2)};
  auto first = store.client(0);
  auto second = store.client(1);
  require_ok(first.init(1, std::vector<float>{1.0f, 2.0f}));
  const auto text = error_of(second.init(1, std::vector<float>{1.0f, 2.0f, 3.0f}));
  BOOST_TEST(names_all(text, {"rank 1", "init of key 1", "3 values", "holds 2 values"}), text);
  require_ok(second.init(1, std::vector<float>{7.0f, 7.0f}));  // the first init's values stay
  check_values(pulled(second, 1, 2), {1.0f, 2.0f});
}

BOOST_AUTO_TEST_CASE(a_push_to_a_shard_that_ended_fails_naming_the_key_and_part) {
  kv_store store{system, options(1)};
  auto kv = store.client(0);
  require_ok(kv.init(4, std::vector<float>(3, 1.0f)));
  caf::scoped_actor self{system};
  const auto shard = store.shards(4).at(0);
  self->monitor(shard);
  self->send_exit(shard, caf::exit_reason::kill);
  self->receive([](const caf::down_msg&) {});
  const auto text = error_of(kv.push(4, std::vector<float>(3, 1.0f)));
  BOOST_TEST(names_all(text, {"push of key 4", "part 0", "shard"}), text);
}

BOOST_AUTO_TEST_CASE(a_shard_ending_while_it_holds_a_dist_sync_push_fails_it_at_once) {
  kv_store store{system, options(2)};  // rank 1 never pushes: the step stays open
  auto kv = store.client(0);
  require_ok(kv.init(4, std::vector<float>(3, 1.0f)));
  auto push = kv.push(4, std::vector<float>(3, 1.0f));
  BOOST_TEST((push.wait_for(100ms) == std::future_status::timeout));
  caf::anon_send_exit(store.shards(4).at(0), caf::exit_reason::kill);
  BOOST_REQUIRE(push.wait_for(5s) == std::future_status::ready);  // not the 30 s timeout
  const auto text = error_of(std::move(push));
  BOOST_TEST(names_all(text, {"push of key 4", "part 0", "shard ended"}), text);
}

BOOST_AUTO_TEST_CASE(a_dist_sync_push_no_other_rank_matches_times_out_naming_the_wait) {
  auto o = options(2);
  o.timeout = 300ms;
  kv_store store{system, o};
  auto kv = store.client(0);
  require_ok(kv.init(0, std::vector<float>(2, 1.0f)));
  const auto text = error_of(kv.push(0, std::vector<float>(2, 1.0f)));
  BOOST_TEST(names_all(text, {"push of key 0", "no answer within 300 ms", "dist_sync"}), text);
}

BOOST_AUTO_TEST_CASE(destroying_the_store_with_calls_outstanding_fails_them_and_later_calls) {
  auto store = std::make_unique<kv_store>(system, options(2));
  auto kv = store->client(0);
  require_ok(kv.init(0, std::vector<float>(2, 1.0f)));
  auto push = kv.push(0, std::vector<float>(2, 1.0f));  // waits for rank 1, which never comes
  std::vector<float> out(2);
  auto pull = kv.pull(0, out);  // queued behind it
  store.reset();
  BOOST_TEST(!error_of(std::move(push)).empty());
  BOOST_TEST(names_all(error_of(std::move(pull)), {"pull of key 0"}));
  const auto later = error_of(kv.push(0, std::vector<float>(2, 1.0f)));
  BOOST_TEST(names_all(later, {"push of key 0", "closed"}), later);
}

BOOST_AUTO_TEST_CASE(options_out_of_range_are_refused_naming_the_field_and_value) {
  const auto refusal = [&](kv_store_options o) -> std::string {
    try {
      kv_store store{system, o};
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  auto o = options(0);
  BOOST_TEST(names_all(refusal(o), {"kv_store_options.workers", "0"}));
  o = options(1);
  o.updater = "(learningRate = -1, sgd = void)";
  BOOST_TEST(names_all(refusal(o), {"updater", "learningRate", "-1"}), refusal(o));
  o.updater = "(learningRate = 0.1, sgd = void";
  BOOST_TEST(names_all(refusal(o), {"kv_store_options.updater:1:"}), refusal(o));
  o = options(1, actors::kv_sync::dist_async);
  o.server_optimizer = false;
  BOOST_TEST(names_all(refusal(o), {"server_optimizer", "dist_sync"}));
}

BOOST_AUTO_TEST_CASE(a_store_runs_in_the_actor_system_an_embedded_runtime_owns) {
  embedded_runtime_options runtime_options;
  runtime_options.workers = 1;
  embedded_runtime strom_runtime{runtime_options};
  kv_store store{strom_runtime.system(), options(1)};
  auto kv = store.client(0);
  require_ok(kv.init(0, std::vector<float>{1.0f, 3.0f}));
  require_ok(kv.push(0, std::vector<float>{2.0f, 2.0f}));
  check_values(pulled(kv, 0, 2), {0.0f, 2.0f});
}

BOOST_AUTO_TEST_CASE(a_system_without_strom_s_message_types_is_refused) {
  caf::actor_system_config bare_config;
  caf::actor_system bare{bare_config};
  try {
    kv_store store{bare, options(1)};
    BOOST_FAIL("a kv_store started in a system without strom's types");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(names_all(e.what(), {"configure_for_strom"}), e.what());
  }
}

BOOST_AUTO_TEST_CASE(each_rank_gets_one_client) {
  kv_store store{system, options(2)};
  auto kv = store.client(1);
  BOOST_TEST(kv.rank() == 1u);
  BOOST_CHECK_THROW(store.client(1), std::invalid_argument);
  BOOST_CHECK_THROW(store.client(2), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
