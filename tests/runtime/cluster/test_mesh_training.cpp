#define BOOST_TEST_MODULE runtime_mesh_training
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/cluster/in_process_cluster.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/node/node_startup.hpp"
#include "support/act_mid_epoch.hpp"
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


/// The index of the node of `cluster` whose id ranks `rank` among its first `nodes` (a job's
/// nodes are ranked by id, and the tree is planned in rank order).
std::size_t index_of_rank(const runtime::in_process_cluster& cluster, std::size_t nodes,
                          std::size_t rank) {
  std::vector<std::pair<std::uint64_t, std::size_t>> by_id;
  for (std::size_t i = 0; i < nodes; ++i)
    by_id.emplace_back(cluster.node_id(i), i);
  std::sort(by_id.begin(), by_id.end());
  return by_id.at(rank).second;
}

/// `epochs` of the small job in `mode` on a mesh of `nodes` one-worker nodes of fanout 2 (may
/// grow to `max_nodes`), with `during` called on the cluster once `fraction` of the first
/// epoch is done.
runtime::training_report train_mesh_with(
  std::uint32_t nodes, std::uint32_t max_nodes, std::uint32_t epochs, double fraction,
  const std::function<void(runtime::in_process_cluster&)>& during,
  schema::TrainingMode mode = schema::TrainingMode::SHARED) {
  auto job = testing::small_fashion_job();
  runtime::local_training_options options;
  options.epochs = epochs;
  options.mode = mode;
  options.topology = actors::topology_kind::mesh;
  options.fanout = 2;
  auto submission = runtime::make_submission(job, options, nodes);
  BOOST_REQUIRE_MESSAGE(submission, (submission ? "" : submission.err().message));
  submission->max_nodes = max_nodes;
  auto cluster = runtime::in_process_cluster::start({nodes, 1});
  BOOST_REQUIRE_MESSAGE(cluster, (cluster ? "" : cluster.err().message));
  testing::act_mid_epoch halfway{1, fraction, [&] { during(**cluster); }};
  auto run = runtime::run_job((*cluster)->home(), (*cluster)->scheduler(), *submission, &halfway);
  BOOST_REQUIRE_MESSAGE(run, (run ? "" : run.err().message));
  BOOST_TEST(halfway.done());
  BOOST_TEST_MESSAGE(nodes << " nodes: accuracy " << run->test_accuracy << ", samples "
                     << run->train_samples << ", redone " << run->samples_redone << ", lost "
                     << run->nodes_lost << ", restored " << run->nodes_restored << ", joined "
                     << run->nodes_joined << ", applied " << run->updates_applied
                     << ", topology version " << run->topology.version);
  return *run;
}

/// What every elastic mesh run must hold: nothing applied twice or rejected, every epoch's
/// samples trained (at most a lost node's batch in flight is redone), a sane model.
void check_nothing_lost_or_applied_twice(const runtime::training_report& report) {
  BOOST_TEST(report.duplicate_updates_applied == 0u);
  BOOST_TEST(report.frames_rejected == 0u);
  BOOST_TEST(report.train_samples >= 0.99 * report.epochs * train_samples);
  BOOST_TEST(report.test_accuracy >= 0.75);
}

/// Two epochs in `mode` on `nodes` nodes that lose the node of rank `rank` in the first: one
/// remap, and the run holds what an elastic run must.
void check_goes_on_without_rank(std::uint32_t nodes, std::size_t rank,
                                schema::TrainingMode mode = schema::TrainingMode::SHARED) {
  const auto report = train_mesh_with(
    nodes, nodes, 2, 0.4,
    [nodes, rank](runtime::in_process_cluster& cluster) {
      cluster.lose(index_of_rank(cluster, nodes, rank));
    },
    mode);
  BOOST_TEST(report.nodes_lost == 1u);
  BOOST_TEST(report.topology.version == 2u);
  check_nothing_lost_or_applied_twice(report);
}

} // namespace

BOOST_AUTO_TEST_CASE(a_mesh_goes_on_without_an_interior_node_lost_mid_epoch) {
  // Fanout 2 over 6 nodes: rank 0 > 1 2; 1 > 3 4; 2 > 5. Rank 1 relays for 3 and 4 and for
  // every frame between them and the rest: they are re-attached and the round's frames the
  // lost relay swallowed are sent again.
  check_goes_on_without_rank(6, 1);
}

BOOST_AUTO_TEST_CASE(parameter_averaging_on_a_mesh_goes_on_without_an_interior_node) {
  // The contributions the lost relay swallowed reach the re-attached nodes from what their
  // new neighbours kept; an average no longer waits for the lost node's worker.
  check_goes_on_without_rank(6, 1, schema::TrainingMode::AVERAGING);
}

BOOST_AUTO_TEST_CASE(parameter_averaging_goes_on_without_the_root_of_its_reduction) {
  // The root sums every average: rank 1 takes its place, the open average starts again along
  // the new tree, and a total some nodes took before the loss reaches the others.
  check_goes_on_without_rank(6, 0, schema::TrainingMode::AVERAGING);
}

BOOST_AUTO_TEST_CASE(a_mesh_goes_on_without_its_root_lost_mid_epoch) {
  // Rank 1 takes the root's place and adopts rank 2 below it; rank 1 also evaluates now.
  check_goes_on_without_rank(4, 0);
}

BOOST_AUTO_TEST_CASE(a_node_that_joins_a_running_mesh_is_wired_in_and_trains) {
  // Fanout 2 over 3 nodes: the root is full, so the joiner hangs under rank 1. It joins
  // after the first epoch and loads its data while the others train: five more short epochs
  // (about 0.3 s each) leave it time to be brought in.
  const auto report = train_mesh_with(3, 4, 6, 1.0, [](runtime::in_process_cluster& cluster) {
    const auto added = cluster.add_node(1);
    BOOST_TEST(added.ok(), (added ? "" : added.err().message));
  });
  BOOST_TEST(report.nodes_joined == 1u);
  BOOST_TEST(report.topology.version == 2u);
  check_nothing_lost_or_applied_twice(report);
}

BOOST_AUTO_TEST_CASE(a_node_that_joins_parameter_averaging_takes_part_from_the_next_round) {
  // The joiner hangs in the tree before its first round: no average of the round it joins
  // waits for it, and every later one sums it.
  const auto report = train_mesh_with(
    3, 4, 6, 1.0,
    [](runtime::in_process_cluster& cluster) {
      const auto added = cluster.add_node(1);
      BOOST_TEST(added.ok(), (added ? "" : added.err().message));
    },
    schema::TrainingMode::AVERAGING);
  BOOST_TEST(report.nodes_joined == 1u);
  BOOST_TEST(report.topology.version == 2u);
  check_nothing_lost_or_applied_twice(report);
}

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
