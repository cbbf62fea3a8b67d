// The backend seam: a replica on the CUDA backend trains as the CPU one does. One job
// (convolution, pooling, batch normalisation, dense, L2, Adam; no dropout, whose masks differ
// by backend) is built through make_replica with training.device cpu and cuda, and every way
// the actors use a replica (a worker alone, gradient sharing, a parameter server's merged
// gradients, the host changing parameters or momentum between steps) must leave the two
// replicas' host copies equal within float tolerance.
#define BOOST_TEST_MODULE cuda_replica_conformance
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "strom/compute/replica.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "device_data.hpp"
#include "support/gpu.hpp"
#include "support/spec_from_text.hpp"

using namespace strom;
using strom::compute::testing::relative_l2;

namespace {

constexpr std::size_t batch = 8;
constexpr std::size_t features = 2 * 8 * 8;
constexpr std::size_t classes = 5;

std::string job_text(const char* device) {
  return std::string{
           "(network = (input = (channels = 2, height = 8, width = 8), weightInit = he, "
           "layers = [(convolution = (filters = 4, kernel = 3, padding = 1, activation = relu)), "
           "(maxPooling = (kernel = 2)), (batchNormalization = ()), "
           "(dense = (units = 16, activation = tanh)), (output = (units = 5))]), "
           "training = (batchSize = 8, seed = 7, l2 = 0.0001, device = "}
         + device + ", updater = (learningRate = 0.01, adam = ())))";
}

std::unique_ptr<compute::replica> replica_on(const char* device) {
  const auto text = job_text(device);
  testing::spec_from_text<schema::Job> job{text.c_str()};
  auto built = compute::make_replica(job.reader, 0);
  BOOST_REQUIRE_MESSAGE(built, (built ? "" : built.err().message));
  return std::move(built).value();
}

/// A batch of random features and labels, different for each `step`.
struct batch_data {
  std::vector<float> x = std::vector<float>(batch * features);
  std::vector<std::int32_t> y = std::vector<std::int32_t>(batch);
  explicit batch_data(unsigned step) {
    std::mt19937 gen{1000 + step};
    std::normal_distribution<float> normal;
    for (auto& v : x)
      v = normal(gen);
    for (auto& l : y)
      l = static_cast<std::int32_t>(gen() % classes);
  }
};

/// The two replicas' host copies agree: parameters and batch-norm state to 1e-5 (float
/// sums in another order), the updater state to 1e-3 (Adam's second moment squares those
/// differences and divides by its square root where gradients are near zero).
void require_same(compute::replica& gpu, compute::replica& cpu) {
  BOOST_TEST(relative_l2(gpu.net().parameters(), cpu.net().parameters()) < 1e-5);
  BOOST_TEST(relative_l2(gpu.net().state(), cpu.net().state()) < 1e-5);
  BOOST_TEST(relative_l2(gpu.updater_state(), cpu.updater_state()) < 1e-3);
}

} // namespace

BOOST_AUTO_TEST_CASE(a_worker_alone_trains_as_on_the_cpu,
                     *boost::unit_test::precondition(support::gpu_present)) {
  auto gpu = replica_on("cuda");
  auto cpu = replica_on("cpu");
  BOOST_TEST(gpu->device_name().starts_with("cuda:"));
  BOOST_TEST(cpu->device_name() == "cpu");
  require_same(*gpu, *cpu);  // the same initial values
  for (unsigned step = 0; step < 6; ++step) {
    batch_data b{step};
    const float gpu_loss = gpu->train_step(b.x, b.y, batch);
    const float cpu_loss = cpu->train_step(b.x, b.y, batch);
    BOOST_TEST(std::abs(gpu_loss - cpu_loss) < 1e-4 * std::max(1.0f, std::abs(cpu_loss)));
  }
  require_same(*gpu, *cpu);
}

BOOST_AUTO_TEST_CASE(host_changes_reach_the_device_before_the_next_step,
                     *boost::unit_test::precondition(support::gpu_present)) {
  auto gpu = replica_on("cuda");
  auto cpu = replica_on("cpu");
  for (unsigned step = 0; step < 3; ++step) {
    batch_data b{step};
    gpu->train_step(b.x, b.y, batch);
    cpu->train_step(b.x, b.y, batch);
    // What a frame, an average or a restore does: the host writes parameters and momentum.
    for (auto* r : {gpu.get(), cpu.get()}) {
      auto p = r->net().parameters();
      for (std::size_t i = step; i < p.size(); i += 7)
        p[i] *= 0.5f;
      auto m = r->momentum();
      for (std::size_t i = step; i < m.size(); i += 5)
        m[i] = 0.0f;
    }
  }
  batch_data b{9};
  gpu->train_step(b.x, b.y, batch);
  cpu->train_step(b.x, b.y, batch);
  require_same(*gpu, *cpu);
}

BOOST_AUTO_TEST_CASE(sharing_scans_the_same_update_into_the_residual,
                     *boost::unit_test::precondition(support::gpu_present)) {
  auto gpu = replica_on("cuda");
  auto cpu = replica_on("cpu");
  const std::size_t n = cpu->net().parameters().size();
  std::vector<float> gpu_residual(n), cpu_residual(n);
  std::vector<std::int32_t> gpu_indices(n), cpu_indices(n);
  for (unsigned step = 0; step < 4; ++step) {
    batch_data b{step};
    gpu->compute_gradients(b.x, b.y, batch);
    cpu->compute_gradients(b.x, b.y, batch);
    // As the trainer applies its own update in the scan's pass (`also`).
    const auto gpu_count = gpu->scan_update(
      {gpu_residual, 1e-3f, gpu_indices, -1.0f, gpu->net().parameters()});
    const auto cpu_count = cpu->scan_update(
      {cpu_residual, 1e-3f, cpu_indices, -1.0f, cpu->net().parameters()});
    // Elements within rounding of the threshold may fall either way.
    BOOST_TEST(std::abs(double(gpu_count) - double(cpu_count)) <= 0.01 * cpu_count + 2);
  }
  BOOST_TEST(relative_l2(gpu_residual, cpu_residual) < 1e-4);
  require_same(*gpu, *cpu);
}

BOOST_AUTO_TEST_CASE(merged_gradients_from_elsewhere_are_applied_on_the_device,
                     *boost::unit_test::precondition(support::gpu_present)) {
  auto gpu = replica_on("cuda");
  auto cpu = replica_on("cpu");
  for (unsigned step = 0; step < 3; ++step) {
    batch_data b{step};
    std::size_t gpu_heard = 1, cpu_heard = 1;
    gpu->compute_gradients(b.x, b.y, batch, [&](std::size_t from) { gpu_heard = from; });
    cpu->compute_gradients(b.x, b.y, batch, [&](std::size_t from) { cpu_heard = from; });
    BOOST_TEST(gpu_heard == 0u);  // every gradient final, as after the CPU's last layer
    BOOST_TEST(cpu_heard == 0u);
    BOOST_TEST(relative_l2(gpu->net().gradients(), cpu->net().gradients()) < 1e-5);
    // A parameter server's merged gradient: written into the host gradients.
    for (auto* r : {gpu.get(), cpu.get()})
      for (auto& g : r->net().gradients())
        g *= 0.75f;
    gpu->apply_gradients();
    cpu->apply_gradients();
  }
  require_same(*gpu, *cpu);
}

BOOST_AUTO_TEST_CASE(an_update_computed_on_the_device_is_the_cpu_update,
                     *boost::unit_test::precondition(support::gpu_present)) {
  auto gpu = replica_on("cuda");
  auto cpu = replica_on("cpu");
  batch_data b{3};
  gpu->compute_update(b.x, b.y, batch);
  cpu->compute_update(b.x, b.y, batch);
  BOOST_TEST(relative_l2(gpu->update(), cpu->update()) < 1e-3);
  std::vector<float> update(cpu->update().begin(), cpu->update().end());
  gpu->apply(update);
  cpu->apply(update);
  require_same(*gpu, *cpu);
}
