#define BOOST_TEST_MODULE actors_subnet
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/actors/pipeline/subnet.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/evaluation.hpp"
#include "strom/compute/pipeline/stage_replica.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "support/deterministic_system.hpp"

// Two subnets on the deterministic coordinator, the test's actor as their job_master: the
// network split in two computes the whole network's step and evaluation.

using namespace strom;
using namespace strom::actors;

namespace {

constexpr std::uint32_t batch = 8;
constexpr float rate = 0.1f;
/// Room for a snapshot of either stage of the small network.
constexpr std::size_t snapshot_bytes = std::size_t{1} << 20;
/// The fixture pipeline's secret (stage_assignment::fetch_token).
constexpr std::uint64_t pipeline_token = 0x5eed;

/// 16 inputs, dense 8 relu, dense 6 tanh, 3 classes: five built layers.
runtime::job_spec small_job(const char* updater = "sgd = void") {
  const std::string text = std::string{R"((
  name = "pipeline_small",
  network = (
    input = (channels = 1, height = 4, width = 4),
    layers = [(dense = (units = 8, activation = relu)),
              (dense = (units = 6, activation = tanh)),
              (output = (units = 3))]
  ),
  data = (train = (csv = (path = "unused.csv"))),
  training = (epochs = 1, batchSize = 8, seed = 7,
              updater = (learningRate = 0.1, )"} + updater + R"())
))";
  auto job = runtime::parse_job_text(text, "pipeline_small.job", "/");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  return std::move(*job);
}

/// `samples` seeded samples of 16 floats in [-1, 1), labels 0..2.
std::shared_ptr<const compute::dataset> samples_of(std::size_t samples, std::uint64_t seed) {
  auto data = std::make_shared<compute::dataset>();
  data->sample_shape = {1, 4, 4};
  data->classes = 3;
  compute::rng gen{seed};
  for (std::size_t i = 0; i < samples * 16; ++i)
    data->features.push_back(gen.uniform(-1.0f, 1.0f));
  for (std::size_t i = 0; i < samples; ++i)
    data->labels.push_back(static_cast<std::int32_t>((i * 7) % 3));
  return data;
}

struct fixture : testing::deterministic_system {
  runtime::job_spec job = small_job();
  std::shared_ptr<compute::stage_replica> front;
  std::shared_ptr<compute::stage_replica> back;
  caf::actor first;
  caf::actor second;

  /// The stages hold each other (stage_links): they end only when told, as a node ends them.
  ~fixture() {
    for (const auto& stage : {first, second})
      if (stage)
        self->send_exit(stage, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// Stages [0, split) and [split, 5) training on `train` in `micro` micro-batches.
  void start(std::shared_ptr<const compute::dataset> train, std::uint32_t micro,
             std::size_t split = 2, std::shared_ptr<const compute::dataset> test = nullptr) {
    const auto rows = compute::slots_for(batch, micro, 2).rows();
    auto a = compute::make_stage_replica(job.reader(), {0, split}, 0, rows);
    auto b = compute::make_stage_replica(job.reader(), {split, 5}, 0, rows);
    BOOST_REQUIRE(a.ok() && b.ok());
    front = std::move(*a);
    back = std::move(*b);
    subnet_setup one{1, 0, 2, micro, front, std::move(train), std::move(test), 7, false};
    subnet_setup two{1, 1, 2, micro, back, nullptr, nullptr, 7, false};
    one.snapshot_bytes = two.snapshot_bytes = snapshot_bytes;
    one.master = two.master = self->address();  // the test plays the job_master
    one.fetch_token = two.fetch_token = pipeline_token;
    first = sys.spawn(subnet, std::move(one));
    second = sys.spawn(subnet, std::move(two));
    self->send(first, stage_links{{}, second, me()});
    self->send(second, stage_links{first, {}, me()});
    sched.run();
  }

  /// Runs `run` on the first stage; returns the marker the last stage sent.
  stage_epoch_end run(stage_run what) {
    self->send(first, what);
    sched.run();
    std::optional<stage_epoch_end> ended;
    self->receive([&](const stage_epoch_end& e) { ended = e; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    BOOST_REQUIRE(ended);
    return *ended;
  }

  /// The whole network's parameters after one plain step on `data` (SGD at `rate`).
  std::vector<float> whole_step(const compute::dataset& data, float& loss) {
    auto whole = compute::make_replica(job.reader(), 0);
    BOOST_REQUIRE(whole.ok());
    loss = (*whole)->train_step(data.features, data.labels, data.size());
    auto p = (*whole)->net().parameters();
    return {p.begin(), p.end()};
  }

  /// Both stages' parameters, first stage's first: the whole network's layout.
  std::vector<float> split_parameters() {
    std::vector<float> all;
    for (const auto* stage : {front.get(), back.get()}) {
      auto p = stage->core().net().parameters();
      all.insert(all.end(), p.begin(), p.end());
    }
    return all;
  }
};

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::abs(got[i] - want[i]) <= 1e-6f + 1e-5f * std::abs(want[i]),
               "element " << i << ": " << got[i] << " against " << want[i]);
}

} // namespace

BOOST_AUTO_TEST_CASE(micro_batches_cover_a_minibatch_in_order) {
  std::uint32_t next = 0;
  for (std::uint32_t m = 0; m < 3; ++m) {
    const auto part = micro_batch_of(8, 3, m);
    BOOST_TEST(part.first == next);
    BOOST_TEST((part.rows == 3 || part.rows == 2));
    next += part.rows;
  }
  BOOST_TEST(next == 8u);
}

BOOST_FIXTURE_TEST_CASE(stages_start_from_the_whole_networks_parameters, fixture) {
  start(samples_of(batch, 1), 3);
  auto whole = compute::make_replica(job.reader(), 0);
  BOOST_REQUIRE(whole.ok());
  auto p = (*whole)->net().parameters();
  check_close(split_parameters(), {p.begin(), p.end()});
}

BOOST_FIXTURE_TEST_CASE(the_first_stage_keeps_one_micro_batch_a_stage_in_flight, fixture) {
  // One forward, one backward: of 8 micro-batches of 1 row the first stage of 2 sends four
  // (two a stage), each into a slot of rows, and the next only once a backward came back,
  // into the slot that micro-batch left. The test's actor plays the second stage.
  const auto slots = compute::slots_for(batch, 8, 2);
  auto a = compute::make_stage_replica(job.reader(), {0, 2}, 0, slots.rows());
  BOOST_REQUIRE(a.ok());
  front = std::move(*a);
  BOOST_TEST(front->rows() == 4u);  // four slots of 1 row, not the minibatch's 8
  subnet_setup one{1, 0, 2, 8, front, samples_of(batch, 3), nullptr, 7, false};
  one.snapshot_bytes = snapshot_bytes;
  one.master = self->address();
  first = sys.spawn(subnet, std::move(one));
  self->send(first, stage_links{{}, me(), me()});
  sched.run();
  self->receive([](wired_atom) {}, caf::after(std::chrono::seconds(0)) >> [] {});
  const auto forwards = [&] {
    sched.run();
    std::vector<stage_forward> got;
    bool more = true;
    while (more)
      self->receive([&](stage_forward& f) { got.push_back(std::move(f)); },
                    [](const stage_snapshot_note&) {}, [](const snapshot_chunk&) {},
                    caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return got;
  };
  self->send(first, stage_run{0, false, 0, 0});
  auto sent = forwards();
  BOOST_REQUIRE_EQUAL(sent.size(), 4u);
  for (std::uint32_t m = 0; m < 4; ++m)
    BOOST_TEST(sent[m].first_row == m);
  const std::vector<float> zeros(front->output_width(), 0.0f);
  auto gradient = compute::build_update_frame({}, compute::dense_fp32_update(zeros));
  BOOST_REQUIRE(gradient.ok());
  self->send(first, stage_backward{0, sent[0].step, sent[0].first_row, 1, *gradient});
  sent = forwards();
  BOOST_REQUIRE_EQUAL(sent.size(), 1u);  // micro-batch 4, in micro-batch 0's slot
  BOOST_TEST(sent[0].first_row == 0u);
  BOOST_TEST(sent[0].labels.size() == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_split_step_over_micro_batches_equals_the_whole_networks_step,
                        fixture) {
  const auto data = samples_of(batch, 2);
  start(data, 3);  // micro-batches of 3, 3 and 2 samples
  float loss = 0.0f;
  const auto want = whole_step(*data, loss);
  const auto ended = run({0, false});
  BOOST_TEST(ended.steps == 1u);
  BOOST_TEST(ended.samples == batch);
  BOOST_TEST(std::abs(ended.loss_sum - loss) < 1e-5);
  BOOST_TEST(ended.busy_seconds.size() == 2u);
  BOOST_TEST(ended.activation_bytes.size() == 2u);
  BOOST_TEST(ended.activation_bytes[0] > 3u * 8u * sizeof(float));  // forwards of 8 floats
  check_close(split_parameters(), want);
  // Epoch-based learning-rate schedules move on at the epoch's end, on every stage.
  BOOST_TEST(front->core().epoch() == 1u);
  BOOST_TEST(back->core().epoch() == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_split_at_another_layer_computes_the_same_step, fixture) {
  const auto data = samples_of(batch, 3);
  start(data, 8, 3);  // one sample a micro-batch; the tanh layer on the second stage
  float loss = 0.0f;
  const auto want = whole_step(*data, loss);
  run({0, false});
  check_close(split_parameters(), want);
}

BOOST_FIXTURE_TEST_CASE(an_evaluation_through_the_stages_equals_the_whole_networks,
                        fixture) {
  const auto test = samples_of(21, 4);  // two full batches and a partial one
  start(samples_of(batch, 5), 2, 2, test);
  const auto ended = run({0, true});
  auto whole = compute::make_replica(job.reader(), 0);
  BOOST_REQUIRE(whole.ok());
  const auto quality = compute::evaluate((*whole)->net(), *test);
  BOOST_TEST(ended.evaluation);
  BOOST_TEST(ended.samples == 21u);
  BOOST_TEST(static_cast<double>(ended.correct) / 21.0 == quality.accuracy, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(ended.loss_sum / 21.0 == quality.loss, boost::test_tools::tolerance(1e-5));
}

BOOST_FIXTURE_TEST_CASE(a_frame_of_the_wrong_size_ends_the_stage_with_an_error, fixture) {
  start(samples_of(batch, 6), 2);
  self->monitor(second);
  const std::vector<float> wrong(5, 1.0f);  // the second stage takes 8 floats a sample
  auto frame = compute::build_update_frame({}, compute::dense_fp32_update(wrong));
  BOOST_REQUIRE(frame.ok());
  self->send(second, stage_forward{0, 0, 0, 0, 0, 1, 1, 1, false, {0}, std::move(*frame)});
  sched.run();
  std::optional<caf::error> reason;
  self->receive([&](const caf::down_msg& down) { reason = down.reason; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_REQUIRE(reason);
  const auto text = error_text(sys, *reason);
  BOOST_TEST(text.find("expected dense_fp32 of 8") != std::string::npos, text);
}

BOOST_FIXTURE_TEST_CASE(a_stage_restored_from_its_holder_trains_on_as_if_never_lost, fixture) {
  // Five minibatches, snapshots every third: at the start, after the third, at the epoch's end.
  const auto data = samples_of(5 * batch, 8);
  auto a = compute::make_stage_replica(job.reader(), {0, 2});
  auto b = compute::make_stage_replica(job.reader(), {2, 5});
  BOOST_REQUIRE(a.ok() && b.ok());
  front = std::move(*a);
  back = std::move(*b);
  auto setup_of = [&](std::uint32_t stage, std::shared_ptr<compute::stage_replica> replica,
                      std::uint32_t generation) {
    subnet_setup setup{1, stage, 2, 2, std::move(replica), stage == 0 ? data : nullptr,
                       nullptr, 7, false};
    setup.generation = generation;
    setup.snapshot_every = 3;
    setup.snapshot_bytes = snapshot_bytes;
    setup.master = self->address();
    return setup;
  };
  first = sys.spawn(subnet, setup_of(0, front, 0));
  second = sys.spawn(subnet, setup_of(1, back, 0));
  self->send(first, stage_links{{}, second, me(), 0});
  self->send(second, stage_links{first, {}, me(), 0});
  sched.run();
  const auto trained = run({0, false, 0, 0});
  const auto want = split_parameters();
  // Each holder told the job_master (here: the test) of the other stage's copies it keeps.
  std::vector<stage_snapshot_note> held;
  for (bool more = true; more;)
    self->receive([&](const stage_snapshot_note& note) { held.push_back(note); },
                  caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
  const stage_point mid{0, 3};
  const auto note_of = [&](std::uint32_t stage) {
    auto found = std::find_if(held.begin(), held.end(), [&](const stage_snapshot_note& n) {
      return n.stage == stage && n.at == mid;
    });
    BOOST_REQUIRE(found != held.end());
    return *found;
  };
  const auto point = note_of(1);
  BOOST_TEST(point.step == 3u);
  BOOST_TEST(point.steps == 3u);  // the last stage's figures at that point
  BOOST_TEST(note_of(0).step == 3u);
  // The second stage's node is lost: a new subnet with freshly initialised layers takes its
  // snapshot from the first stage, which goes back to its own.
  self->send_exit(second, caf::exit_reason::kill);
  sched.run();
  auto fresh = compute::make_stage_replica(job.reader(), {2, 5});
  BOOST_REQUIRE(fresh.ok());
  back = std::move(*fresh);
  second = sys.spawn(subnet, setup_of(1, back, 1));
  // Answers come back as messages: the test's actor only looks after the coordinator ran.
  const auto answer = [&] {
    std::optional<std::uint64_t> steps;
    self->receive([&](std::uint64_t n) { steps = n; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    return steps;
  };
  // The second stage held the first's copies: the first sends the new one a copy once linked.
  self->send(first, stage_rollback{1, point, true});
  sched.run();
  const auto undone = answer();
  self->send(second, stage_restore{first, point});
  sched.run();
  const auto restored = answer();
  BOOST_REQUIRE(undone && restored);
  BOOST_TEST(*restored == 0u);
  BOOST_TEST(*undone == 2u);
  self->send(first, stage_links{{}, second, me(), 1});
  self->send(second, stage_links{first, {}, me(), 1});
  sched.run();
  std::optional<stage_snapshot_note> copied;
  self->receive([&](const stage_snapshot_note& note) { copied = note; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_REQUIRE_MESSAGE(copied, "the new second stage holds no copy of the first's");
  BOOST_TEST(copied->stage == 0u);
  BOOST_TEST((copied->at == mid));
  const auto again = run({0, false, 1, 3});
  BOOST_TEST(again.steps == trained.steps);
  BOOST_TEST(again.samples == trained.samples);
  BOOST_TEST(std::abs(again.loss_sum - trained.loss_sum) < 1e-5);
  check_close(split_parameters(), want);
}

namespace {

/// One copy of a two-stage pipeline among two (--pipelines 2), the test's actor playing the
/// other copy of both stages.
struct copy_fixture : fixture {
  /// The copy's stages on `train` (copy 1 trains the first half of every epoch).
  void start_copy(std::shared_ptr<const compute::dataset> train) {
    auto a = compute::make_stage_replica(job.reader(), {0, 2});
    auto b = compute::make_stage_replica(job.reader(), {2, 5});
    BOOST_REQUIRE(a.ok() && b.ok());
    front = std::move(*a);
    back = std::move(*b);
    auto setup_of = [&](std::uint32_t stage, std::shared_ptr<compute::stage_replica> replica) {
      subnet_setup setup{1, stage, 2, 2, std::move(replica), stage == 0 ? train : nullptr,
                         nullptr, 7, false};
      setup.pipelines = 2;
      setup.snapshot_every = 0;
      setup.master = self->address();
      return setup;
    };
    first = sys.spawn(subnet, setup_of(0, front));
    second = sys.spawn(subnet, setup_of(1, back));
    self->send(first, stage_links{{}, second, me(), 0, {{}, me()}});
    self->send(second, stage_links{first, {}, me(), 0, {{}, me()}});
    sched.run();
  }

  /// The updates the copy's stages sent the other copy so far.
  std::vector<compute::frame_header> updates_sent() {
    std::vector<compute::frame_header> sent;
    for (bool more = true; more;)
      self->receive(
        [&](const stage_update& u) {
          compute::frame_workspace ws;
          auto view = compute::read_update_frame(u.update, ws);
          BOOST_REQUIRE(view.ok());
          sent.push_back(view->header);
        },
        [&](const stage_epoch_end&) { ended = true; },
        caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return sent;
  }

  /// The other copy's update of minibatch `step` of epoch 0 to `stage`: `values` added.
  void send_update(const caf::actor& stage, std::uint64_t step, std::vector<float> values,
                   std::uint64_t copy = 1) {
    compute::frame_header header;
    header.origin_node = copy;
    header.iteration = step;
    auto built = compute::build_update_frame(header, compute::dense_fp32_update(values));
    BOOST_REQUIRE(built.ok());
    self->send(stage, stage_update{0, std::move(*built)});
    sched.run();
  }

  bool ended = false;
};

std::vector<float> zeros_like(const compute::stage_replica& stage) {
  return std::vector<float>(stage.core().net().parameters().size(), 0.0f);
}

} // namespace

// A copy runs at most one minibatch ahead of the other copy's updates, sends its own after
// every step, and adds the other copy's at the next step boundary (ping-pong): the minibatch
// in flight when they arrive computes with the parameters it started with.
BOOST_FIXTURE_TEST_CASE(copies_of_a_stage_share_updates_at_step_boundaries, copy_fixture) {
  const auto data = samples_of(8 * batch, 9);  // four minibatches a copy
  // The same copy fed zeros as the other's updates: what it computes on its own.
  start_copy(data);
  self->send(first, stage_run{0, false, 0, 0});
  sched.run();
  auto sent = updates_sent();
  BOOST_REQUIRE_EQUAL(sent.size(), 4u);  // minibatches 0 and 1, from both stages
  for (const auto& header : sent) {
    BOOST_TEST(header.origin_node == 0u);
    BOOST_TEST(header.epoch == 0u);
    BOOST_TEST(header.iteration < 2u);
  }
  BOOST_TEST(!ended);  // minibatch 2 waits for the other copy's first update
  send_update(first, 0, zeros_like(*front));
  send_update(second, 0, zeros_like(*back));
  BOOST_TEST(updates_sent().size() == 2u);
  send_update(second, 1, zeros_like(*back));
  BOOST_TEST(updates_sent().empty());  // the first stage's copy has not sent minibatch 1 yet
  send_update(first, 1, zeros_like(*front));
  BOOST_TEST(updates_sent().size() == 2u);  // minibatch 3, then the epoch's end
  BOOST_TEST(ended);
  const auto alone = split_parameters();
  self->send_exit(first, caf::exit_reason::user_shutdown);
  self->send_exit(second, caf::exit_reason::user_shutdown);
  sched.run();

  // Again, with the other copy's update of minibatch 1 to the first stage carrying delta: it
  // lets minibatch 3 start, and is added at minibatch 3's step boundary.
  ended = false;
  start_copy(data);
  self->send(first, stage_run{0, false, 0, 0});
  sched.run();
  updates_sent();
  auto delta = zeros_like(*front);
  for (std::size_t i = 0; i < delta.size(); ++i)
    delta[i] = 0.001f * static_cast<float>(i % 7);
  send_update(first, 0, zeros_like(*front));
  send_update(second, 0, zeros_like(*back));
  send_update(second, 1, zeros_like(*back));
  send_update(first, 1, delta);
  updates_sent();
  BOOST_TEST(ended);
  const auto with_delta = split_parameters();
  // Minibatch 3 started before its boundary added delta, so it computed exactly what it
  // computed alone: the two runs differ by delta in the first stage and not at all after it.
  for (std::size_t i = 0; i < with_delta.size(); ++i) {
    const float want = alone[i] + (i < delta.size() ? delta[i] : 0.0f);
    BOOST_TEST(std::abs(with_delta[i] - want) <= 1e-6f, "element " << i);
  }
}

BOOST_FIXTURE_TEST_CASE(an_update_from_no_copy_or_of_the_wrong_size_is_refused, copy_fixture) {
  start_copy(samples_of(8 * batch, 10));
  self->send(first, stage_run{0, false, 0, 0});
  sched.run();
  updates_sent();
  const auto before = split_parameters();
  auto stranger = sys.spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](int) {}};
  });
  send_update(first, 0, std::vector<float>(3, 1.0f));          // wrong size
  send_update(first, 0, zeros_like(*front), 0);                // names the wrong copy
  compute::frame_header header;
  header.origin_node = 1;
  auto built = compute::build_update_frame(header, compute::dense_fp32_update(zeros_like(*front)));
  BOOST_REQUIRE(built.ok());
  caf::anon_send(first, stage_update{0, std::move(*built)});  // from no copy
  sched.run();
  BOOST_TEST(updates_sent().empty());  // still waiting: none of them counted
  BOOST_TEST(!ended);
  check_close(split_parameters(), before);
  self->send_exit(stranger, caf::exit_reason::user_shutdown);
  sched.run();
}

// A stage's state moves only when its job_master says so: links, runs, rollbacks, restores
// and refills from any other actor are refused (a stranger on the network cannot reset a
// stage or make it train), and the stage goes on as before. Its state goes only to a fetch
// that names the pipeline's token (#40: a stranger cannot read the model).
BOOST_FIXTURE_TEST_CASE(only_its_job_master_moves_a_stage, fixture) {
  start(samples_of(2 * batch, 9), 2);
  const auto before = split_parameters();
  caf::scoped_actor stranger{sys};
  stranger->send(first, stage_rollback{0, stage_snapshot_note{}, false});
  stranger->send(second, stage_restore{first, stage_snapshot_note{}});
  stranger->send(second, stage_refill{{first}, {0}, {2}, 0, stage_snapshot_note{}});
  stranger->send(second, stage_links{{}, {}, stranger, 0});
  stranger->send(first, stage_run{0, false, 0, 0});
  stranger->send(first, stage_state_fetch{0, pipeline_token + 1});
  sched.run();
  std::vector<std::string> refusals;
  for (bool more = true; more;)
    stranger->receive(
      [&](caf::error& err) {
        BOOST_TEST((strom_code_of(err) == strom_error::not_permitted));
        refusals.push_back(sys.render(err));
      },
      caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
  BOOST_TEST(refusals.size() == 5u);  // a run is a message without an answer
  BOOST_TEST(split_parameters() == before, boost::test_tools::per_element());
  // Its job_master's run still trains the stages, linked as they were.
  const auto ended = run({0, false, 0, 0});
  BOOST_TEST(ended.steps == 2u);
  BOOST_TEST(split_parameters() != before);
}
