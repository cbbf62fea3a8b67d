#define BOOST_TEST_MODULE runtime_job_spec
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "strom/runtime/job/job_spec.hpp"

using namespace strom;
using namespace strom::runtime;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string parse_error(const std::string& text) {
  auto job = parse_job_text(text, "bad.job", "/data");
  BOOST_REQUIRE(!job.ok());
  return job.err().message;
}

/// A valid job (the smallest network, every other setting at its default) with `training`,
/// `distributed` or other top-level fields added.
std::string job_with(const std::string& fields) {
  return "(name = \"j\", network = (input = (width = 4), layers = [(output = (units = 3))])"
         + (fields.empty() ? "" : ", " + fields) + ")";
}

/// The message check_job gives `text` (which must parse).
std::string check_error(const std::string& text) {
  auto job = parse_job_text(text, "bad.job", "/data");
  BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
  auto checked = check_job(*job);
  BOOST_REQUIRE(!checked.ok());
  return checked.err().message;
}

/// A file in the temporary folder, removed at the end of the test.
struct temporary_file {
  std::filesystem::path path;
  temporary_file(const std::string& name, const std::string& contents)
    : path(std::filesystem::temp_directory_path() / name) {
    std::ofstream{path, std::ios::binary} << contents;
  }
  ~temporary_file() { std::filesystem::remove(path); }
};

} // namespace

BOOST_AUTO_TEST_CASE(example_jobs_parse) {
  for (const char* name : {"fashion_mlp.job", "fashion_cnn.job"}) {
    auto job = load_job_file(std::string{STROM_SOURCE_DIR} + "/examples/" + name);
    BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
    BOOST_TEST(job->reader().getTraining().getBatchSize() == 64u);
    BOOST_TEST(job->reader().getNetwork().getLayers().size() >= 3u);
  }
}

BOOST_AUTO_TEST_CASE(unknown_field_is_reported_with_line_and_column) {
  auto message = parse_error("(\n  name = \"x\",\n  trainin = (epochs = 2)\n)");
  BOOST_TEST(contains(message, "bad.job:3:3:"), message);
  BOOST_TEST(contains(message, "trainin"), message);
}

BOOST_AUTO_TEST_CASE(misspelled_enum_value_lists_the_valid_ones) {
  auto message = parse_error(
    "(network = (layers = [(dense = (units = 5, activation = rlu))]))");
  BOOST_TEST(contains(message, "'rlu'"), message);
  BOOST_TEST(contains(message, "activation"), message);
  BOOST_TEST(contains(message, "relu"), message);
  BOOST_TEST(contains(message, "bad.job:1:"), message);
}

BOOST_AUTO_TEST_CASE(out_of_range_number_is_reported) {
  auto message = parse_error("(training = (epochs = -3))");
  BOOST_TEST(contains(message, "bad.job:1:"), message);
  BOOST_TEST(contains(message, "out of range"), message);
}

BOOST_AUTO_TEST_CASE(unterminated_text_is_a_parse_error) {
  BOOST_TEST(contains(parse_error("(training = (epochs = 3)"), "bad.job:1:"));
}

BOOST_AUTO_TEST_CASE(relative_data_paths_resolve_against_the_job_folder) {
  auto job = parse_job_text(
    R"((data = (train = (idx = (images = "imgs.gz", labels = "/abs/labels.gz")))))", "j.job",
    "/data/sets");
  BOOST_REQUIRE(job.ok());
  auto idx = job->reader().getData().getTrain().getIdx();
  BOOST_TEST(std::string{idx.getImages().cStr()} == "/data/sets/imgs.gz");
  BOOST_TEST(std::string{idx.getLabels().cStr()} == "/abs/labels.gz");
}

BOOST_AUTO_TEST_CASE(missing_file_names_the_path) {
  auto job = load_job_file("/nonexistent/x.job");
  BOOST_REQUIRE(!job.ok());
  BOOST_TEST(contains(job.err().message, "/nonexistent/x.job"));
}

BOOST_AUTO_TEST_CASE(binary_file_is_refused) {
  auto path = std::filesystem::temp_directory_path() / "strom_binary.job";
  {
    std::ofstream out{path, std::ios::binary};
    out.write("(\0\0\0", 4);
  }
  auto job = load_job_file(path.string());
  BOOST_REQUIRE(!job.ok());
  BOOST_TEST(contains(job.err().message, "NUL byte"), job.err().message);
  std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(nesting_bomb_is_refused_at_the_bracket_past_the_limit) {
  // 5000 levels overflowed the stack inside Cap'n Proto's recursive text parser.
  auto message = parse_error(std::string(5000, '(') + std::string(5000, ')'));
  BOOST_TEST(contains(message, "bad.job:1:65: nested more than 64 levels deep"), message);
  BOOST_TEST(message.size() < 400u, message);  // the 10 KB line is not quoted whole
}

BOOST_AUTO_TEST_CASE(brackets_in_comments_and_strings_do_not_count_as_nesting) {
  const std::string deep(100, '(');
  auto job = parse_job_text("# " + deep + "\n(name = \"" + deep + "\\\"" + deep + "\")", "j.job",
                            "/data");
  BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
  BOOST_TEST(job->reader().getName().size() == 201u);
}

BOOST_AUTO_TEST_CASE(nesting_on_a_later_line_names_that_line) {
  auto message = parse_error("(name = \"x\",\n  # a comment (\n  training = " + std::string(70, '['));
  BOOST_TEST(contains(message, "bad.job:3:"), message);
  BOOST_TEST(contains(message, "nested more than 64"), message);
}

BOOST_AUTO_TEST_CASE(oversized_file_is_refused_naming_both_sizes) {
  temporary_file big{"strom_big.job", "(name = \"x\")" + std::string(2 << 20, ' ')};
  auto job = load_job_file(big.path.string());
  BOOST_REQUIRE(!job.ok());
  BOOST_TEST(contains(job.err().message, big.path.string()), job.err().message);
  BOOST_TEST(contains(job.err().message, "2097164 bytes, more than the 1048576"), job.err().message);
}

BOOST_AUTO_TEST_CASE(endless_device_is_read_one_byte_past_the_limit_and_refused) {
  auto job = load_job_file("/dev/zero");
  BOOST_REQUIRE(!job.ok());
  BOOST_TEST(contains(job.err().message, "/dev/zero: job file is more than the 1048576 bytes"),
             job.err().message);
  BOOST_TEST(contains(job.err().message, "stopped reading at 1048577"), job.err().message);
}

BOOST_AUTO_TEST_CASE(folder_is_refused_as_a_job_file) {
  auto job = load_job_file(std::filesystem::temp_directory_path().string());
  BOOST_REQUIRE(!job.ok());
  BOOST_TEST(contains(job.err().message, "is a folder"), job.err().message);
}

BOOST_AUTO_TEST_CASE(load_checks_the_job_and_names_the_file) {
  temporary_file bad{"strom_huge_batch.job", job_with("training = (batchSize = 1000000000)")};
  auto job = load_job_file(bad.path.string());
  BOOST_REQUIRE(!job.ok());
  BOOST_TEST(contains(job.err().message,
                      bad.path.string() + ": training.batchSize: 1000000000 is outside [1, 1048576]"),
             job.err().message);
}

BOOST_AUTO_TEST_CASE(a_valid_job_passes_the_checks) {
  auto job = parse_job_text(job_with("training = (batchSize = 16, computeThreads = 2)"), "j.job",
                            "/data");
  BOOST_REQUIRE(job.ok());
  auto checked = check_job(*job);
  BOOST_TEST(checked.ok(), (checked.ok() ? "" : checked.err().message));
}

BOOST_AUTO_TEST_CASE(compute_threads_beyond_the_bound_are_refused) {
  BOOST_TEST(contains(check_error(job_with("training = (computeThreads = 100000)")),
                      "bad.job: training.computeThreads: 100000 is outside [1, 1024]"));
}

BOOST_AUTO_TEST_CASE(zero_epochs_are_refused) {
  BOOST_TEST(contains(check_error(job_with("training = (epochs = 0)")),
                      "training.epochs: 0 is outside [1, 1000000]"));
}

BOOST_AUTO_TEST_CASE(nan_sharing_threshold_is_refused_whatever_the_workers) {
  // Refused in the job itself, not only where sharing starts (which one worker never does).
  BOOST_TEST(contains(
    check_error(job_with("distributed = (sharing = (threshold = (fixed = (threshold = nan))))")),
    "distributed.sharing.fixed.threshold: nan must be finite and > 0"));
}

BOOST_AUTO_TEST_CASE(nan_residual_clip_factor_is_refused_even_without_clipping) {
  BOOST_TEST(contains(
    check_error(job_with("distributed = (sharing = (residualClipFactor = nan, residualClipEvery = 0))")),
    "distributed.sharing.residualClipFactor: nan"));
}

BOOST_AUTO_TEST_CASE(infinite_learning_rate_is_refused) {
  BOOST_TEST(contains(check_error(job_with("training = (updater = (learningRate = inf))")),
                      "training.updater.learningRate: inf is not a finite number"));
}

BOOST_AUTO_TEST_CASE(nan_l2_is_refused) {
  BOOST_TEST(contains(check_error(job_with("training = (l2 = nan)")), "training.l2: nan"));
}

BOOST_AUTO_TEST_CASE(nan_adam_beta_is_refused) {
  BOOST_TEST(contains(check_error(job_with("training = (updater = (adam = (beta1 = nan)))")),
                      "training.updater.adam.beta1: nan"));
}

BOOST_AUTO_TEST_CASE(huge_dense_layer_is_refused_with_its_path) {
  BOOST_TEST(contains(check_error("(network = (input = (width = 4), layers = [(dense = (units = "
                                  "4000000000)), (output = (units = 3))]))"),
                      "bad.job: network.layers[0].dense.units: 4000000000 is more than"));
}

BOOST_AUTO_TEST_CASE(zero_workers_per_node_are_refused) {
  BOOST_TEST(contains(check_error(job_with("distributed = (workersPerNode = 0)")),
                      "distributed.workersPerNode: 0 is outside [1, 1024]"));
}

BOOST_AUTO_TEST_CASE(name_that_would_leave_the_checkpoint_folder_is_refused) {
  auto message = check_error("(name = \"../../etc/x\", network = (input = (width = 4), layers = "
                             "[(output = (units = 3))]))");
  BOOST_TEST(contains(message, "bad.job: name: '../../etc/x' cannot name a checkpoint file"),
             message);
}

BOOST_AUTO_TEST_CASE(topology_and_fanout_default_to_plain_and_eight) {
  auto job = parse_job_text(job_with(""), "j.job", "/data");
  BOOST_REQUIRE(job.ok());
  const auto topology = topology_of(*job);
  BOOST_TEST((topology.kind == actors::topology_kind::plain));
  BOOST_TEST(topology.fanout == 8u);
}

BOOST_AUTO_TEST_CASE(a_mesh_topology_and_its_fanout_are_read_from_the_job) {
  auto job = parse_job_text(job_with("distributed = (topology = mesh, fanout = 3)"), "j.job",
                            "/data");
  BOOST_REQUIRE(job.ok());
  BOOST_TEST(check_job(*job).ok());
  const auto topology = topology_of(*job);
  BOOST_TEST((topology.kind == actors::topology_kind::mesh));
  BOOST_TEST(topology.fanout == 3u);
  // What the job_master receives: the kind as text, named as the job file and flags name it.
  BOOST_TEST(actors::to_string(topology_of(*parse_job_text(
               job_with("distributed = (topology = auto)"), "j.job", "/data")).kind) == "auto");
}

BOOST_AUTO_TEST_CASE(zero_fanout_is_refused_naming_the_file_and_field) {
  BOOST_TEST(contains(check_error(job_with("distributed = (topology = mesh, fanout = 0)")),
                      "bad.job: distributed.fanout: 0 is outside [1, 1024]"));
}

BOOST_AUTO_TEST_CASE(fanout_past_1024_is_refused) {
  BOOST_TEST(contains(check_error(job_with("distributed = (fanout = 1025)")),
                      "bad.job: distributed.fanout: 1025 is outside [1, 1024]"));
}

BOOST_AUTO_TEST_CASE(an_unknown_topology_is_a_parse_error_naming_it) {
  BOOST_TEST(contains(parse_error(job_with("distributed = (topology = star)")), "star"));
}

BOOST_AUTO_TEST_CASE(a_kvstore_job_is_checked_naming_the_field) {
  BOOST_TEST(check_job(*parse_job_text(
                         job_with("distributed = (mode = kvstore, kvstore = distAsync, "
                                  "compression = twoBit)"),
                         "j.job", "/data"))
               .ok());
  BOOST_TEST(check_job(*parse_job_text(job_with("distributed = (mode = kvstore, replicas = 2)"),
                                        "j.job", "/data"))
               .ok());
  BOOST_TEST(contains(check_error(job_with("distributed = (mode = kvstore, replicas = 17)")),
                      "bad.job: distributed.replicas: 17 is outside [1, 16]"));
  BOOST_TEST(contains(
    check_error(job_with("distributed = (mode = kvstore, kvstore = distAsync, "
                         "serverOptimizer = false)")),
    "bad.job: distributed.serverOptimizer: false needs kvstore dist_sync"));
  BOOST_TEST(contains(check_error(job_with("distributed = (twoBitThreshold = -0.5)")),
                      "bad.job: distributed.twoBitThreshold: -0.5 must be a positive number"));
  BOOST_TEST(contains(check_error(job_with("distributed = (bigArrayBound = 0)")),
                      "bad.job: distributed.bigArrayBound: must be at least 1, got 0"));
}

BOOST_AUTO_TEST_CASE(a_staleness_beyond_any_bound_is_refused_naming_the_field) {
  BOOST_TEST(contains(check_error(job_with("distributed = (staleness = 4294967295)")),
                      "bad.job: distributed.staleness: 4294967295 is more than 1000000 steps"));
  auto bounded = parse_job_text(job_with("distributed = (staleness = 3)"), "ok.job", "/data");
  BOOST_REQUIRE(bounded.ok());
  BOOST_TEST(check_job(*bounded).ok());
}

BOOST_AUTO_TEST_CASE(an_averaging_frequency_of_zero_is_refused_naming_the_field) {
  const auto zero = job_with("distributed = (mode = averaging, averagingFrequency = 0)");
  BOOST_TEST(contains(check_error(zero),
                      "bad.job: distributed.averagingFrequency: 0 is outside [1, 1000000]"));
}

BOOST_AUTO_TEST_CASE(training_modes_are_named_as_in_job_files_and_flags) {
  for (const auto* name : {"shared", "averaging", "kvstore", "pipeline"})
    BOOST_TEST(to_string(parse_training_mode(name).value()) == std::string{name});
  BOOST_TEST(contains(parse_training_mode("allreduce").err().message,
                      "mode 'allreduce' is not shared, averaging, kvstore or pipeline"));
}

BOOST_AUTO_TEST_CASE(pipeline_settings_out_of_range_are_refused_naming_the_field) {
  BOOST_TEST(contains(check_error(job_with("distributed = (mode = pipeline, stages = 1)")),
                      "bad.job: distributed.stages: 1 is outside [2, 1024]"));
  BOOST_TEST(contains(check_error(job_with("distributed = (mode = pipeline, pipelines = 0)")),
                      "bad.job: distributed.pipelines: 0 is outside [1, 1024]"));
  BOOST_TEST(contains(check_error(job_with("distributed = (mode = pipeline, microBatches = 999)")),
                      "distributed.microBatches: 999 is more than the"));
  BOOST_TEST(contains(check_error(job_with("distributed = (mode = pipeline, snapshotEvery = 0)")),
                      "bad.job: distributed.snapshotEvery: must be at least 1 step, got 0"));
  BOOST_TEST(contains(check_error(job_with("distributed = (mode = pipeline, spares = 2000)")),
                      "bad.job: distributed.spares: 2000 is more than 1024"));
}
