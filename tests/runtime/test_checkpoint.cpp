#define BOOST_TEST_MODULE runtime_checkpoint
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/checkpoint.hpp"

using namespace strom;
using namespace strom::runtime;
namespace fs = std::filesystem;

namespace {

constexpr const char* small_job = R"((
  name = "tiny",
  network = (input = (width = 6), layers = [
    (dense = (units = 8, activation = relu)), (batchNormalization = ()), (output = (units = 3))]),
  training = (batchSize = 4, seed = 5, updater = (learningRate = 0.01, adam = ()))))";

struct fixture {
  fs::path dir = fs::temp_directory_path() / "strom_checkpoint_test";
  job_spec job = *parse_job_text(small_job, "tiny.job", ".");
  std::unique_ptr<compute::replica> trained = *compute::make_replica(job.reader(), 0);

  fixture() {
    fs::create_directories(dir);
    std::vector<float> features(4 * 6);
    compute::rng gen{1};
    for (auto& f : features)
      f = gen.uniform(-1.0f, 1.0f);
    const std::vector<std::int32_t> labels{0, 1, 2, 1};
    for (int i = 0; i < 3; ++i)
      trained->train_step(features, labels, 4);
  }
  ~fixture() { fs::remove_all(dir); }

  std::string save(const std::string& name) {
    auto path = (dir / name).string();
    auto ok = save_checkpoint(path, job, *trained, {1, trained->iteration(), 12, 0.5f, 0.7f});
    BOOST_REQUIRE_MESSAGE(ok.ok(), (ok.ok() ? "" : ok.err().message));
    return path;
  }
};

template <class A, class B>
bool same(const A& a, const B& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

} // namespace

BOOST_FIXTURE_TEST_CASE(round_trip_restores_every_buffer_and_the_progress, fixture) {
  auto saved = load_checkpoint(save("a.ckpt"));
  BOOST_REQUIRE_MESSAGE(saved.ok(), (saved.ok() ? "" : saved.err().message));
  BOOST_TEST(saved->progress.iteration == 3u);
  BOOST_TEST(saved->progress.samples_seen == 12u);
  BOOST_TEST(saved->progress.test_accuracy == 0.5f);
  BOOST_TEST(std::string{saved->job.reader().getName().cStr()} == "tiny");

  auto fresh = *compute::make_replica(saved->job.reader(), 0);
  BOOST_TEST(!same(fresh->net().parameters(), trained->net().parameters()));
  auto ok = restore_checkpoint(*saved, *fresh);
  BOOST_REQUIRE(ok.ok());
  BOOST_TEST(same(fresh->net().parameters(), trained->net().parameters()));
  BOOST_TEST(same(fresh->updater_state(), trained->updater_state()));
  BOOST_TEST(same(fresh->net().state(), trained->net().state()));
  BOOST_TEST(fresh->iteration() == 3u);
}

BOOST_FIXTURE_TEST_CASE(truncated_checkpoint_is_refused, fixture) {
  auto path = save("b.ckpt");
  fs::resize_file(path, fs::file_size(path) - 64);
  auto loaded = load_checkpoint(path);
  BOOST_REQUIRE(!loaded.ok());
  BOOST_TEST(loaded.err().message.find(path) != std::string::npos, loaded.err().message);
}

BOOST_FIXTURE_TEST_CASE(odd_sized_and_garbage_files_are_refused, fixture) {
  auto odd = (dir / "odd.ckpt").string();
  std::ofstream{odd} << "not a checkpoint";  // 16 bytes: two words of text
  auto loaded = load_checkpoint(odd);
  BOOST_REQUIRE(!loaded.ok());
  std::ofstream{odd} << "not a checkpoint!";
  BOOST_TEST(load_checkpoint(odd).err().message.find("not a whole number") != std::string::npos);
  BOOST_TEST(!load_checkpoint((dir / "missing.ckpt").string()).ok());
}

BOOST_FIXTURE_TEST_CASE(restoring_into_a_different_model_is_refused, fixture) {
  auto saved = load_checkpoint(save("c.ckpt"));
  BOOST_REQUIRE(saved.ok());
  auto other_job = *parse_job_text(R"((network = (input = (width = 6), layers = [
      (output = (units = 3))]), training = (updater = (adam = ()))))", "other.job", ".");
  auto other = *compute::make_replica(other_job.reader(), 0);
  auto ok = restore_checkpoint(*saved, *other);
  BOOST_REQUIRE(!ok.ok());
  BOOST_TEST(ok.err().message.find("parameters") != std::string::npos, ok.err().message);
}

BOOST_FIXTURE_TEST_CASE(saving_leaves_no_partial_file, fixture) {
  auto path = save("d.ckpt");
  BOOST_TEST(fs::exists(path));
  BOOST_TEST(!fs::exists(path + ".partial"));
}
