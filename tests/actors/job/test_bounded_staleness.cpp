#define BOOST_TEST_MODULE actors_bounded_staleness
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/averaging/node_average.hpp"
#include "strom/actors/sharing/node_framer.hpp"
#include "strom/actors/averaging/parameter_averaging.hpp"
#include "strom/actors/sharing/relay.hpp"
#include "strom/actors/worker/trainer.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "support/deterministic_system.hpp"

using namespace strom;
using namespace strom::actors;

namespace {

/// Features per sample of the tiny test model.
constexpr std::size_t features = 4;
/// Samples in the tiny training set: 8 steps of batch 1.
constexpr std::size_t samples = 8;

using strom::testing::deterministic_system;

/// A replica of a one-layer model; `rule` is the updater's union field in job-text form.
std::shared_ptr<compute::replica> tiny_replica(const std::string& rule = "sgd = void") {
  const auto job = runtime::parse_job_text(
    "(network = (input = (width = 4), layers = [(output = (units = 2))]), "
    "training = (batchSize = 1, updater = (learningRate = 0.1, " + rule + ")))",
    "tiny.job", ".");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  auto built = compute::make_replica(job->reader(), 0);
  BOOST_REQUIRE_MESSAGE(built, (built ? "" : built.err().message));
  return std::move(*built);
}

std::shared_ptr<const compute::dataset> tiny_data() {
  auto data = std::make_shared<compute::dataset>();
  data->sample_shape = compute::shape{1, 1, features};
  data->classes = 2;
  for (std::size_t i = 0; i < samples; ++i) {
    for (std::size_t f = 0; f < features; ++f)
      data->features.push_back(static_cast<float>((i + f) % 3) * 0.5f);
    data->labels.push_back(static_cast<std::int32_t>(i % 2));
  }
  return data;
}

/// The node of the trainers under test: its only worker takes its own frames at once, so its
/// own clock never holds it back; the tests hold it back with other origins.
constexpr std::uint64_t own_node = 9;

/// A trainer over the tiny data in order, batch 1, with the updater `rule`, the only worker
/// of node own_node, whose relay and supervisor are the test's actor.
trainer_setup tiny_setup(deterministic_system& env, const std::string& rule = "sgd = void") {
  trainer_setup setup;
  setup.replica = tiny_replica(rule);
  setup.train = tiny_data();
  setup.share = {0, samples};
  setup.shuffle = false;
  setup.batch_size = 1;
  setup.framer = std::make_shared<node_framer>(
    own_node, 1, setup.replica->net().parameters().size(), compute::frame_options{});
  setup.relay = caf::actor_cast<trainer_relay_actor>(env.me());
  setup.supervisor = caf::actor_cast<trainer_supervisor_actor>(env.me());
  return setup;
}

/// Frames the trainer published (one per step) waiting in the test's mailbox, taken out.
std::size_t published(deterministic_system& env) {
  return env.take_all<publish_atom, shared_frame>();
}

/// The first frame the trainer published.
compute::frame first_published(deterministic_system& env) {
  compute::frame first;
  env.self->receive([&](publish_atom, const shared_frame& f) { first = f.value; },
                    caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("no frame"); });
  return first;
}

/// The change `f` carries, as added to a zero model of `size` elements.
std::vector<float> change_in(const compute::frame& f, std::size_t size) {
  std::vector<float> change(size, 0.0f);
  compute::frame_workspace ws;
  auto applied = compute::apply_update_frame(f, change, ws);
  BOOST_REQUIRE_MESSAGE(applied, (applied ? "" : applied.err().message));
  return change;
}

caf::actor spawn_trainer(deterministic_system& env, std::vector<std::uint64_t> origins,
                         std::uint32_t staleness) {
  auto setup = tiny_setup(env);
  setup.origins = std::move(origins);
  setup.staleness = staleness;
  return env.sys.spawn(trainer, std::move(setup));
}

/// A header-only round of `origin` (what a node sends when nothing passed) whose
/// clock is sequence + 1, as when every round holds an update of every worker.
compute::frame empty_round(std::uint64_t origin, std::uint64_t sequence, std::uint32_t epoch) {
  const compute::encoded_update nothing{compute::encoding::threshold, 0.5f, features * 2 + 2, 0,
                                        {}};
  auto built = compute::build_update_frame({origin, 0, sequence, sequence + 1, epoch, 0}, nothing);
  BOOST_REQUIRE_MESSAGE(built, (built ? "" : built.err().message));
  return *built;
}

void stop(deterministic_system& env, const caf::actor& a) {
  env.self->send_exit(a, caf::exit_reason::user_shutdown);
  env.sched.run();
}

} // namespace

BOOST_AUTO_TEST_CASE(empty_update_frame_reads_and_applies_as_nothing) {
  const auto f = empty_round(3, 9, 1);
  compute::frame_workspace ws;
  auto view = compute::read_update_frame(f, ws);
  BOOST_REQUIRE_MESSAGE(view, (view ? "" : view.err().message));
  BOOST_TEST(view->header.origin_node == 3u);
  BOOST_TEST(view->header.sequence == 9u);
  BOOST_TEST(view->payload.size() == 0u);
  std::vector<float> model(features * 2 + 2, 1.0f);
  BOOST_REQUIRE(compute::apply_update_frame(f, model, ws));
  for (float value : model)
    BOOST_TEST(value == 1.0f);
}

BOOST_AUTO_TEST_CASE(trainer_past_the_bound_waits_and_resumes_when_a_frame_arrives) {
  deterministic_system env;
  auto t = spawn_trainer(env, {own_node, 0}, 1);
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  // Updates 1 and 2 need no clock (2 - 1 - staleness 1 = 0); the 3rd needs origin 0 at 1.
  BOOST_TEST(published(env) == 2u);
  env.self->send(t, shared_frame{empty_round(0, 0, 0)});
  env.sched.run();
  BOOST_TEST(published(env) == 1u);
  env.self->send(t, shared_frame{empty_round(0, 1, 0)});
  env.self->send(t, shared_frame{empty_round(0, 2, 0)});
  env.sched.run();
  BOOST_TEST(published(env) == 2u);
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(trainer_waits_for_the_slowest_origin) {
  deterministic_system env;
  auto t = spawn_trainer(env, {own_node, 0, 1}, 2);
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  BOOST_TEST(published(env) == 3u);
  env.self->send(t, shared_frame{empty_round(0, 0, 0)});
  env.sched.run();
  BOOST_TEST(published(env) == 0u);  // origin 1 has sent nothing yet
  env.self->send(t, shared_frame{empty_round(1, 0, 0)});
  env.sched.run();
  BOOST_TEST(published(env) == 1u);
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(a_drained_origin_no_longer_holds_a_trainer_back) {
  deterministic_system env;
  auto t = spawn_trainer(env, {own_node, 0, 1}, 1);
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  BOOST_TEST(published(env) == 2u);
  env.self->send(t, shared_frame{empty_round(0, 0, 0)});
  env.self->send(t, drain_marker{1, 0});
  env.sched.run();
  BOOST_TEST(published(env) == 1u);
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(a_round_cut_short_ends_for_a_worker_parked_on_an_average_that_never_came) {
  // Parameter averaging every step with node 0: the worker contributes to average 0 and waits
  // for it and for node 0's clock. The round is cut (a node joins) before node 0 contributed;
  // node 0 then ends the round (its drain marker) and so must this worker, without the average.
  deterministic_system env;
  auto setup = tiny_setup(env);
  setup.origins = {own_node, 0};
  setup.staleness = 0;
  setup.averaging = {1, true};
  setup.node_sums = std::make_shared<node_average>(
    1, contribution_elements(setup.replica->net().parameters().size(),
                             setup.replica->updater_state().size(), setup.averaging));
  auto t = env.sys.spawn(trainer, std::move(setup));
  round_work work;
  work.rank = 0;
  work.ranks = 1;
  work.origins = {own_node, 0};
  work.common_steps = work.most_steps = samples;
  env.self->send(t, work);
  env.sched.run();
  BOOST_TEST((env.take_all<publish_atom, average_part>() == 1u));  // its node's sum
  BOOST_TEST(published(env) == 1u);                               // its clock
  env.self->send(t, cut_atom_v, std::uint32_t{0});
  env.sched.run();
  BOOST_TEST(env.take_all<epoch_report>() == 0u);  // node 0's clock still holds it back
  env.self->send(t, drain_marker{0, 0});
  env.sched.run();
  BOOST_TEST(env.take_all<epoch_report>() == 1u);
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(a_parked_trainer_tells_the_stall_watch_which_origin_it_waits_for) {
  deterministic_system env;
  auto t = spawn_trainer(env, {own_node, 0, 1}, 1);
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  BOOST_TEST(published(env) == 2u);
  env.self->send(t, shared_frame{empty_round(0, 0, 0)});  // origin 0 catches up, 1 does not
  env.self->send(t, stall_atom_v);
  env.sched.run();
  std::optional<worker_activity> activity;
  env.self->receive([&](const worker_activity& a) { activity = a; },
                    caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_REQUIRE(activity);
  BOOST_TEST(activity->waiting);
  BOOST_TEST(activity->steps == 2u);
  BOOST_TEST((activity->waiting_for == std::vector<std::uint64_t>{1}));
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(drain_report_waits_for_the_marker_of_every_origin) {
  deterministic_system env;
  auto t = spawn_trainer(env, {0, 5}, 1);
  env.self->send(t, drain_marker{0, 0});
  env.sched.run();
  BOOST_TEST(env.take_all<drain_report>() == 0u);
  env.self->send(t, drain_marker{0, 0});  // a repeat of an origin does not count twice
  env.sched.run();
  BOOST_TEST(env.take_all<drain_report>() == 0u);
  env.self->send(t, drain_marker{5, 0});
  env.sched.run();
  env.self->receive([](const drain_report& report) { BOOST_TEST(report.epoch == 0u); },
                    caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("no drain report"); });
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(trainer_with_staleness_zero_waits_for_every_update_of_its_origins) {
  deterministic_system env;
  auto t = spawn_trainer(env, {own_node, 0}, 0);
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  BOOST_TEST(published(env) == 1u);
  env.self->send(t, shared_frame{empty_round(0, 0, 0)});  // clock 1: the first is everywhere
  env.sched.run();
  BOOST_TEST(published(env) == 1u);
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(trainer_without_origins_stops_with_an_error) {
  deterministic_system env;
  auto t = spawn_trainer(env, {}, 1);
  env.self->monitor(t);
  env.sched.run();
  env.self->receive(
    [&](const caf::down_msg& down) {
      BOOST_TEST(env.sys.render(down.reason).find("origins") != std::string::npos);
    },
    caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("the trainer did not stop"); });
}

BOOST_AUTO_TEST_CASE(trainer_publishes_its_update_negated_threshold_encoded_and_framed) {
  deterministic_system env;
  auto setup = tiny_setup(env);
  setup.origins = {own_node, 0};
  setup.staleness = 0;  // one step, then the trainer waits for origin 0
  setup.encoding.policy = compute::threshold_policy{compute::fixed_threshold_options{0.01f}};
  // The same step on an equal replica gives the update the frame must carry.
  auto twin = tiny_replica();
  const auto& data = *setup.train;
  twin->compute_update(std::span{data.features}.first(features), std::span{data.labels}.first(1),
                       1);
  const std::vector<float> expected_update(twin->update().begin(), twin->update().end());
  auto t = env.sys.spawn(trainer, std::move(setup));
  // The test is also a sibling trainer: it gets the same frame, directly.
  env.self->send(t, siblings_atom_v, env.me());
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  const auto first = first_published(env);
  compute::frame_workspace ws;
  const auto view = compute::read_update_frame(first, ws);
  BOOST_REQUIRE(view);
  BOOST_TEST(view->header.origin_node == own_node);
  BOOST_TEST(view->header.sequence == 0u);
  BOOST_TEST(view->header.iteration == 1u);  // the node's clock: its one worker's update
  BOOST_TEST(view->elements == expected_update.size());
  const auto change = change_in(first, expected_update.size());
  for (std::size_t i = 0; i < change.size(); ++i) {
    const float u = expected_update[i];
    const float want = u >= 0.01f ? -0.01f : (u <= -0.01f ? 0.01f : 0.0f);
    BOOST_TEST(change[i] == want, "element " << i);
  }
  BOOST_TEST(std::count(change.begin(), change.end(), 0.0f) < std::ssize(change));
  std::size_t at_sibling = 0;
  env.self->receive([&](const shared_frame& f) { at_sibling += f.value.size() == first.size(); },
                    caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(at_sibling == 1u);
  BOOST_TEST(published(env) == 0u);  // one step only
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(last_worker_of_the_node_to_finish_publishes_the_drain_marker) {
  deterministic_system env;
  auto setup = tiny_setup(env);
  setup.origins = {own_node};  // a node alone: nothing goes to the relay
  setup.staleness = 0;         // worker 0's second step waits for worker 1's first update
  setup.share = {0, 2};
  const auto elements = setup.replica->net().parameters().size();
  setup.framer =
    std::make_shared<node_framer>(own_node, 2, elements, compute::frame_options{});
  auto framer = setup.framer;
  auto t = env.sys.spawn(trainer, std::move(setup));
  env.self->send(t, siblings_atom_v, env.me());  // the test is worker 1
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  BOOST_TEST(env.take_all<shared_frame>() == 1u);
  // Worker 1 frames one update, hands it over and is done first.
  auto frame = framer->frame(1, 0, {compute::encoding::threshold, 0.5f, elements, 0, {}});
  BOOST_REQUIRE(frame);
  env.self->send(t, shared_frame{frame->frame});
  BOOST_TEST(!framer->finish(1));
  env.sched.run();
  BOOST_TEST(env.take_all<shared_frame>() == 1u);
  env.self->receive([](const drain_marker& m) {
                      BOOST_TEST(m.origin == own_node);
                      BOOST_TEST(m.epoch == 0u);
                    },
                    caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("no drain marker"); });
  BOOST_TEST(env.take_all<drain_report>() == 1u);  // its own marker drains the only origin
  BOOST_TEST(published(env) == 0u);
  const auto markers_published = env.take_all<publish_atom, drain_marker>();
  BOOST_TEST(markers_published == 0u);
  stop(env, t);
}

BOOST_AUTO_TEST_CASE(trainer_reports_progress_at_most_every_interval_and_all_of_it_by_the_end) {
  deterministic_system env;
  auto t = spawn_trainer(env, {own_node}, 1);
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();  // virtual time stands still: every step but the report at the end waits
  std::vector<step_report> reports;
  env.self->receive_while([&] { return reports.empty(); })(
    [&](const step_report& r) { reports.push_back(r); });
  BOOST_TEST(env.take_all<step_report>() == 0u);
  BOOST_TEST(reports.front().batches == samples);
  BOOST_TEST(reports.front().samples == samples);
  BOOST_TEST(reports.front().loss_sum > 0.0);
  env.self->receive([](const epoch_report& done) { BOOST_TEST(done.batches == samples); },
                    caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("no epoch report"); });
  // Once the interval passed, the next step reports at once.
  env.self->send(t, start_atom_v, std::uint32_t{1});
  env.sched.run_once();  // the start
  env.sched.clock().current_time += step_report_interval;
  env.sched.run_once();  // the first step
  env.self->receive([](const step_report& r) { BOOST_TEST(r.batches == 1u); },
                    caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("no step report"); });
  stop(env, t);
}

namespace {

std::vector<float> parameters_of(compute::replica& replica) {
  const auto values = replica.net().parameters();
  return {values.begin(), values.end()};
}

/// `f` again as frame `sequence` of node `origin`, as that node would frame the same change.
compute::frame reframed(const compute::frame& f, std::uint64_t origin, std::uint64_t sequence) {
  compute::frame_workspace ws;
  auto view = compute::read_update_frame(f, ws);
  BOOST_REQUIRE(view);
  auto header = view->header;
  header.origin_node = origin;
  header.sequence = sequence;
  auto built = compute::build_update_frame(
    header, {view->enc, view->threshold, view->elements, 1, view->payload});
  BOOST_REQUIRE_MESSAGE(built, (built ? "" : built.err().message));
  return *built;
}

/// A trainer (three origins, synchronous) through one step: its replica before the step, the
/// step's full update and the change its frame carries, then its replica after the step
/// (which includes taking its own frame) and after node 1 sends the same change.
struct own_update_trace {
  std::vector<float> before, update, change;
  std::vector<float> after_step, after_other_frame;
};

own_update_trace trace_own_update(bool apply_own_update) {
  deterministic_system env;
  auto setup = tiny_setup(env);
  setup.origins = {own_node, 1, 2};
  setup.staleness = 0;  // one step, then the trainer waits for origin 2 throughout
  setup.encoding.policy = compute::threshold_policy{compute::fixed_threshold_options{0.01f}};
  setup.apply_own_update = apply_own_update;
  auto replica = setup.replica;
  own_update_trace trace;
  trace.before = parameters_of(*replica);
  auto twin = tiny_replica();
  const auto& data = *setup.train;
  twin->compute_update(std::span{data.features}.first(features), std::span{data.labels}.first(1),
                       1);
  trace.update.assign(twin->update().begin(), twin->update().end());
  auto t = env.sys.spawn(trainer, std::move(setup));
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  const auto first = first_published(env);
  trace.change = change_in(first, trace.update.size());
  trace.after_step = parameters_of(*replica);
  env.self->send(t, shared_frame{reframed(first, 1, 0)});
  env.sched.run();
  trace.after_other_frame = parameters_of(*replica);
  stop(env, t);
  return trace;
}

/// a + b element by element, in float as the replica adds.
std::vector<float> plus(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(trainer_applies_its_own_update_in_full_and_skips_its_own_frame) {
  const auto trace = trace_own_update(true);
  std::vector<float> stepped(trace.before.size());
  for (std::size_t i = 0; i < stepped.size(); ++i) stepped[i] = trace.before[i] - trace.update[i];
  const auto held_back = std::count(trace.change.begin(), trace.change.end(), 0.0f);
  BOOST_TEST(held_back > 0);
  BOOST_TEST(held_back < static_cast<std::ptrdiff_t>(trace.change.size()));
  BOOST_TEST(trace.after_step == stepped, boost::test_tools::per_element());
  BOOST_TEST(trace.after_other_frame == plus(stepped, trace.change),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(trainer_without_own_update_applies_itself_only_through_its_frame) {
  const auto trace = trace_own_update(false);
  const auto once = plus(trace.before, trace.change);
  BOOST_TEST(trace.after_step == once, boost::test_tools::per_element());
  BOOST_TEST(trace.after_other_frame == plus(once, trace.change),
             boost::test_tools::per_element());
}

/// Runs a trainer with momentum SGD for one step and returns its velocity, with the twin's
/// (the same step, no masking) in `unmasked` and the elements sent in `sent`. The first
/// update is 0.1 * gradient: the threshold sends some elements and keeps others.
std::vector<float> velocity_after_one_step(bool masking, std::vector<float>& unmasked,
                                               std::vector<bool>& sent) {
  deterministic_system env;
  auto setup = tiny_setup(env, "momentum = ()");
  setup.origins = {own_node, 0};
  setup.encoding.policy = compute::threshold_policy{compute::fixed_threshold_options{0.035f}};
  setup.momentum_masking = masking;
  setup.staleness = 0;  // the trainer then waits for origin 0 after the first step
  auto replica = setup.replica;
  auto twin = tiny_replica("momentum = ()");
  const auto& data = *setup.train;
  twin->compute_update(std::span{data.features}.first(features), std::span{data.labels}.first(1),
                       1);
  unmasked.assign(twin->momentum().begin(), twin->momentum().end());
  auto t = env.sys.spawn(trainer, std::move(setup));
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  const auto change = change_in(first_published(env), unmasked.size());
  sent.assign(change.size(), false);
  for (std::size_t i = 0; i < change.size(); ++i) sent[i] = change[i] != 0.0f;
  // Origin 0 sends nothing: the trainer waits after one step and its replica is at rest.
  std::vector<float> moment(replica->momentum().begin(), replica->momentum().end());
  stop(env, t);
  return moment;
}

BOOST_AUTO_TEST_CASE(trainer_clears_the_momentum_of_exactly_the_elements_it_sent) {
  std::vector<float> unmasked;
  std::vector<bool> sent;
  const auto masked = velocity_after_one_step(true, unmasked, sent);
  std::size_t cleared = 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < masked.size(); ++i) {
    BOOST_TEST(masked[i] == (sent[i] ? 0.0f : unmasked[i]), "element " << i);
    cleared += sent[i];
    kept += !sent[i] && unmasked[i] != 0.0f;
  }
  BOOST_TEST(cleared > 0u);
  BOOST_TEST(kept > 0u);
}

BOOST_AUTO_TEST_CASE(trainer_without_masking_keeps_its_momentum) {
  std::vector<float> unmasked;
  std::vector<bool> sent;
  const auto kept = velocity_after_one_step(false, unmasked, sent);
  BOOST_TEST(std::count(sent.begin(), sent.end(), true) > 0);
  BOOST_TEST(kept == unmasked, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(relay_forwards_a_marker_to_peers_but_not_back_to_the_sender) {
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  caf::scoped_actor sender{env.sys};
  caf::scoped_actor other_peer{env.sys};
  env.self->send(r, subscribe_atom_v, env.me());
  env.self->send(r, add_peer_atom_v, caf::actor_cast<caf::actor>(sender));
  env.self->send(r, add_peer_atom_v, caf::actor_cast<caf::actor>(other_peer));
  env.sched.run();
  sender->send(r, drain_marker{7, 2});
  env.sched.run();
  env.self->receive([](const drain_marker& m) { BOOST_TEST(m.origin == 7u); },
                    caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("no marker"); });
  other_peer->receive([](const drain_marker& m) { BOOST_TEST(m.epoch == 2u); },
                      caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("no marker"); });
  bool echoed = false;
  sender->receive([&](const drain_marker&) { echoed = true; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(!echoed);
  stop(env, r);
}

BOOST_AUTO_TEST_CASE(relay_forwards_a_marker_seen_twice_only_once) {
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  env.self->send(r, subscribe_atom_v, env.me());
  env.sched.run();
  env.self->send(r, drain_marker{7, 0});
  env.self->send(r, drain_marker{7, 0});
  env.sched.run();
  BOOST_TEST(env.take_all<drain_marker>() == 1u);
  stop(env, r);
}
