#define BOOST_TEST_MODULE process_elastic_soak
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <random>
#include <string>

#include "cluster_processes.hpp"

// Issue 17's soak: 4 worker processes train while random workers are killed with -9 at random
// moments, each restarted a moment later under its name; the job must complete with nothing
// applied twice and every epoch covered. Label `soak` (the file name): CI skips it.

using namespace strom::test;

namespace {

constexpr int kills = 20;
constexpr const char* epochs = "30";
constexpr auto soak_limit = 900'000ms;
/// How long a restarted worker may take to be brought back into the job.
constexpr auto restore_limit = 60'000ms;

/// How many times the scheduler's log says a node was restored.
std::size_t restores(local_cluster& cluster) {
  const auto log = cluster.scheduler().err();
  std::size_t count = 0;
  for (auto at = log.find("restored node"); at != std::string::npos;
       at = log.find("restored node", at + 1))
    ++count;
  return count;
}

} // namespace

BOOST_AUTO_TEST_CASE(twenty_kills_of_random_workers_each_restarted_lose_and_double_nothing) {
  local_cluster cluster{4};
  const auto metrics_path = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start(
    {"submit", fashion_mlp_job, "--epochs", epochs, "--metrics-out", metrics_path.string()},
    "submit");
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 1/", soak_limit), submit->transcript());
  std::mt19937 random{4};  // fixed: the same workers at the same moments each run
  std::vector<child*> live{&cluster.worker(0), &cluster.worker(1), &cluster.worker(2),
                           &cluster.worker(3)};
  std::vector<std::string> names{"w1", "w2", "w3", "w4"};
  for (int kill = 0; kill < kills; ++kill) {
    std::this_thread::sleep_for(
      std::chrono::milliseconds(std::uniform_int_distribution<int>{200, 1500}(random)));
    const auto which = std::uniform_int_distribution<std::size_t>{0, live.size() - 1}(random);
    live[which]->signal(SIGKILL);
    std::this_thread::sleep_for(
      std::chrono::milliseconds(std::uniform_int_distribution<int>{100, 1000}(random)));
    live[which] = &cluster.start_worker(names[which],
                                        names[which] + "_" + std::to_string(kill + 1));
    const auto restored = static_cast<std::size_t>(kill + 1);
    BOOST_REQUIRE_MESSAGE(eventually([&] { return restores(cluster) >= restored; }, restore_limit),
                          "kill " << kill + 1 << " was not restored\n"
                                  << live[which]->transcript() << submit->transcript()
                                  << cluster.scheduler().transcript());
  }
  const auto status = submit->wait(soak_limit);
  BOOST_REQUIRE_MESSAGE(status && *status == 0,
                        submit->transcript() << cluster.scheduler().transcript());
  const auto metrics = read_text(metrics_path);
  BOOST_TEST(json_number(metrics, "nodes_lost") == kills, metrics);
  BOOST_TEST(json_number(metrics, "nodes_restored") == kills, metrics);
  BOOST_TEST(json_number(metrics, "duplicate_updates_applied") == 0.0, metrics);
  BOOST_TEST(json_number(metrics, "train_samples") >= 0.99 * 30 * 60000, metrics);
  BOOST_TEST(json_number(metrics, "test_accuracy") >= 0.88, metrics);
}
