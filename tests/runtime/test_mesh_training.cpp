#define BOOST_TEST_MODULE runtime_mesh_training
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>

#include "strom/runtime/cluster_training.hpp"
#include "strom/runtime/local_training.hpp"
#include "support/small_fashion_job.hpp"

// In-process clusters (each node its own actor system over loopback) whose relays form a
// mesh: every node publishes its relay on a guarded port and each child connects to its
// parent's, so frames travel only along the tree.

using namespace strom;

namespace {

/// Training samples of the small job and its batch size (support/small_fashion_job.hpp).
constexpr std::uint64_t train_samples = 60000;
constexpr std::uint64_t batch_size = 64;

/// One epoch of the small job on `nodes` nodes of one worker each, with `topology`.
runtime::training_report train_one_epoch(std::uint32_t nodes, actors::topology_kind topology,
                                         std::uint32_t fanout) {
  auto job = testing::small_fashion_job();
  runtime::local_training_options options;
  options.epochs = 1;
  options.topology = topology;
  options.fanout = fanout;
  auto run = runtime::train_on_cluster(job, options, {nodes, 1});
  BOOST_REQUIRE_MESSAGE(run, (run ? "" : run.err().message));
  BOOST_TEST_MESSAGE(nodes << " nodes, " << run->topology.kind << " fanout " << fanout
                     << ": accuracy " << run->test_accuracy << ", applied "
                     << run->updates_applied << ", max_links " << run->topology.max_links
                     << ", " << run->wall_seconds << " s");
  return *run;
}

/// The frames the workers apply in all when every frame reaches every worker once: one per
/// batch of every worker, at each of the `nodes` workers (a worker counts its own too).
/// `nodes` must divide the training set.
std::uint64_t applied_once(std::uint64_t nodes) {
  const auto batches = (train_samples / nodes + batch_size - 1) / batch_size;
  return nodes * batches * nodes;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_mesh_of_fanout_2_over_6_nodes_delivers_every_frame_once_to_every_node) {
  const auto report = train_one_epoch(6, actors::topology_kind::mesh, 2);
  BOOST_TEST(report.topology.kind == "mesh");
  BOOST_TEST(report.topology.fanout == 2u);
  // Node 1 of the tree 0 -> {1, 2}, 1 -> {3, 4}, 2 -> {5}: a parent and two children.
  BOOST_TEST(report.topology.max_links == 3u);
  BOOST_TEST(report.updates_applied == applied_once(6));
  BOOST_TEST(report.duplicate_updates_applied == 0u);
  // A tree has one path between two nodes: no relay ever sees a frame twice.
  BOOST_TEST(report.duplicate_updates_dropped == 0u);
  BOOST_TEST(report.frames_rejected == 0u);
  BOOST_TEST(report.test_accuracy >= 0.75);
}

BOOST_AUTO_TEST_CASE(auto_below_32_nodes_is_plain_through_the_hub) {
  const auto report = train_one_epoch(3, actors::topology_kind::automatic, 2);
  BOOST_TEST(report.topology.kind == "plain");
  BOOST_TEST(report.topology.max_links == 3u);  // the hub sends to every node
  BOOST_TEST(report.updates_applied == applied_once(3));
  BOOST_TEST(report.duplicate_updates_applied == 0u);
}
