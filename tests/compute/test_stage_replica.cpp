#define BOOST_TEST_MODULE compute_stage_replica
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/pipeline/stage_replica.hpp"
#include "strom/compute/random.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"

// A convolutional network split into two pipeline stages with several micro-batches in
// flight at once: the layers that keep something per sample between forward and backward
// (pooling winners, dropout masks, batch statistics) keep each micro-batch's at its rows.

using namespace strom;
using namespace strom::compute;

namespace {

constexpr std::size_t batch = 12;
constexpr std::uint32_t micro = 4;  // of 3 rows each
constexpr std::size_t width = 2 * 6 * 6;

runtime::job_spec job_with(const std::string& layers) {
  const std::string text = R"((
  name = "pipeline_cnn",
  network = (
    input = (channels = 2, height = 6, width = 6),
    layers = [)" + layers + R"(]
  ),
  data = (train = (csv = (path = "unused.csv"))),
  training = (epochs = 1, batchSize = 12, seed = 5, updater = (learningRate = 0.1, sgd = void))
))";
  auto job = runtime::parse_job_text(text, "pipeline_cnn.job", "/");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  return std::move(*job);
}

struct minibatch {
  std::vector<float> features;
  std::vector<std::int32_t> labels;
};

minibatch seeded_minibatch() {
  minibatch m;
  rng gen{11};
  for (std::size_t i = 0; i < batch * width; ++i)
    m.features.push_back(gen.uniform(-1.0f, 1.0f));
  for (std::size_t i = 0; i < batch; ++i)
    m.labels.push_back(static_cast<std::int32_t>((i * 5) % 3));
  return m;
}

/// The index of the first built layer after the one of kind `kind`: where stage 2 starts.
std::size_t split_after(const runtime::job_spec& job, const std::string& kind) {
  auto built = make_layers(job.reader().getNetwork(), 0);
  BOOST_REQUIRE(built.ok());
  for (std::size_t i = 0; i < built->layers.size(); ++i)
    if (built->layers[i]->kind() == kind)
      return i + 1;
  BOOST_FAIL("no " << kind << " layer");
  return 0;
}

struct two_stages {
  std::unique_ptr<stage_replica> front;
  std::unique_ptr<stage_replica> back;
  std::vector<float> passed;    // the first stage's output, the whole minibatch's rows
  std::vector<float> returned;  // dL/d(that output), one micro-batch's
  std::vector<float> none;

  micro_batch_slots slots;  // where the micro-batches in flight live

  /// By default each micro-batch has its place in the minibatch's rows.
  two_stages(const runtime::job_spec& job, std::size_t split)
      : two_stages(job, split, {micro, batch / micro}) {}

  two_stages(const runtime::job_spec& job, std::size_t split, micro_batch_slots in)
      : slots(in) {
    auto built = make_layers(job.reader().getNetwork(), 0);
    BOOST_REQUIRE(built.ok());
    auto a = make_stage_replica(job.reader(), {0, split}, 0, slots.rows());
    auto b = make_stage_replica(job.reader(), {split, built->layers.size()}, 0, slots.rows());
    BOOST_REQUIRE_MESSAGE(a.ok(), (a.ok() ? "" : a.err().message));
    BOOST_REQUIRE_MESSAGE(b.ok(), (b.ok() ? "" : b.err().message));
    front = std::move(*a);
    back = std::move(*b);
    passed.assign(batch * front->output_width(), 0.0f);
    returned.assign(batch * back->input_width(), 0.0f);
  }

  void forward(const minibatch& m, std::size_t m_index) {
    const std::size_t place = m_index * (batch / micro);
    const std::size_t first = slots.first_row(static_cast<std::uint32_t>(m_index));
    const std::size_t rows = batch / micro;
    auto in = front->input_rows(first, rows);
    std::copy_n(m.features.begin() + static_cast<std::ptrdiff_t>(place * width), rows * width,
                in.begin());
    auto out = front->forward(first, rows);
    auto into = back->input_rows(first, rows);
    std::copy(out.begin(), out.end(), into.begin());
  }

  void backward(const minibatch& m, std::size_t m_index) {
    const std::size_t place = m_index * (batch / micro);
    const std::size_t first = slots.first_row(static_cast<std::uint32_t>(m_index));
    const std::size_t rows = batch / micro;
    auto gradient = std::span{returned}.first(rows * back->input_width());
    back->forward_backward(first, rows, std::span{m.labels}.subspan(place, rows), batch,
                           gradient);
    front->backward(first, rows, gradient, none);
  }

  std::vector<float> summed() const {
    std::vector<float> all;
    for (const auto* stage : {front.get(), back.get()}) {
      auto g = stage->summed_gradient();
      all.insert(all.end(), g.begin(), g.end());
    }
    return all;
  }
};

void check_close(const std::vector<float>& got, std::span<const float> want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::abs(got[i] - want[i]) <= 1e-6f + 1e-4f * std::abs(want[i]),
               "element " << i << ": " << got[i] << " against " << want[i]);
}

} // namespace

// GPipe's schedule keeps every micro-batch's forward in flight before the backwards, which
// here run in another order: max pooling's winners and dropout's masks must be those of the
// micro-batch's own rows. The sum is then the whole minibatch's gradient (the first stage,
// which holds the dropout layer, draws the masks in row order as the whole network does).
BOOST_AUTO_TEST_CASE(convolution_pooling_and_dropout_stages_sum_the_minibatch_gradient) {
  const auto job = job_with(R"(
    (convolution = (filters = 3, kernel = 3, padding = 1, activation = relu)),
    (maxPooling = (kernel = 2)),
    (dropout = (rate = 0.4)),
    (dense = (units = 5, activation = relu)),
    (output = (units = 3)))");
  const auto m = seeded_minibatch();
  two_stages stages{job, split_after(job, "dropout")};
  for (std::size_t i = 0; i < micro; ++i)
    stages.forward(m, i);
  for (std::size_t i : std::array<std::size_t, micro>{2, 0, 3, 1})
    stages.backward(m, i);

  auto whole = make_replica(job.reader(), 0);
  BOOST_REQUIRE(whole.ok());
  (*whole)->compute_gradients(m.features, m.labels, batch);
  check_close(stages.summed(), (*whole)->net().gradients());
}

// The one-forward-one-backward schedule keeps at most one micro-batch a stage in flight, each
// in a slot of rows the micro-batch two before it has left: four micro-batches through two
// slots of 3 rows (half the rows) sum to the whole minibatch's gradient.
BOOST_AUTO_TEST_CASE(one_forward_one_backward_through_two_slots_sums_the_minibatch_gradient) {
  const auto job = job_with(R"(
    (convolution = (filters = 3, kernel = 3, padding = 1, activation = relu)),
    (maxPooling = (kernel = 2)),
    (dense = (units = 5, activation = relu)),
    (output = (units = 3)))");
  const micro_batch_slots slots{2, batch / micro};
  const auto m = seeded_minibatch();
  two_stages stages{job, split_after(job, "max_pooling"), slots};
  BOOST_TEST(stages.front->rows() == batch / 2);
  stages.forward(m, 0);
  stages.forward(m, 1);
  for (std::size_t i = 0; i < micro; ++i) {
    stages.backward(m, i);
    if (i + 2 < micro)
      stages.forward(m, i + 2);  // into the slot micro-batch i has just left
  }
  auto whole = make_replica(job.reader(), 0);
  BOOST_REQUIRE(whole.ok());
  (*whole)->compute_gradients(m.features, m.labels, batch);
  check_close(stages.summed(), (*whole)->net().gradients());
}

BOOST_AUTO_TEST_CASE(the_schedule_sets_how_many_micro_batches_a_stage_keeps) {
  using schema::PipelineSchedule;
  // 1F1B: two a stage (here 4 of 8 micro-batches of 8 rows), GPipe: all of them.
  const auto one_f_one_b = slots_for(64, 8, 2);
  BOOST_TEST(one_f_one_b.slots == 4u);
  BOOST_TEST(one_f_one_b.rows() == 32u);
  BOOST_TEST(slots_for(64, 8, 2, PipelineSchedule::GPIPE).rows() == 64u);
  BOOST_TEST(slots_for(64, 2, 2).slots == 2u);  // never more than the minibatch has
  BOOST_TEST(slots_for(10, 3, 2).slot_rows == 4u);  // the largest micro-batch: 4, 3, 3
}

// Batch normalisation in a pipeline normalises each micro-batch over its own samples (as
// GPipe does): with all four in flight, each backward uses its own micro-batch's statistics,
// as if the micro-batches had run one after another.
BOOST_AUTO_TEST_CASE(batch_normalization_keeps_each_micro_batch_statistics) {
  const auto job = job_with(R"(
    (convolution = (filters = 3, kernel = 3, padding = 1, activation = relu)),
    (batchNormalization = ()),
    (averagePooling = (kernel = 2)),
    (dense = (units = 5, activation = tanh)),
    (output = (units = 3)))");
  const auto m = seeded_minibatch();
  const auto split = split_after(job, "average_pooling");
  two_stages in_flight{job, split};
  for (std::size_t i = 0; i < micro; ++i)
    in_flight.forward(m, i);
  for (std::size_t i : std::array<std::size_t, micro>{3, 1, 0, 2})
    in_flight.backward(m, i);

  two_stages one_by_one{job, split};
  for (std::size_t i = 0; i < micro; ++i) {
    one_by_one.forward(m, i);
    one_by_one.backward(m, i);
  }
  check_close(in_flight.summed(), one_by_one.summed());
  // Not the whole minibatch's gradient: the statistics differ.
  auto whole = make_replica(job.reader(), 0);
  BOOST_REQUIRE(whole.ok());
  (*whole)->compute_gradients(m.features, m.labels, batch);
  const auto summed = in_flight.summed();
  const auto want = (*whole)->net().gradients();
  double apart = 0.0;
  for (std::size_t i = 0; i < summed.size(); ++i)
    apart = std::max(apart, static_cast<double>(std::abs(summed[i] - want[i])));
  BOOST_TEST(apart > 1e-4);
}
