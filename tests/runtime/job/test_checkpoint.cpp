#define BOOST_TEST_MODULE runtime_checkpoint
#include <boost/test/unit_test.hpp>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <thread>

#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/checkpoint.hpp"
#include "strom/schema/checkpoint.capnp.h"

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
    auto ok = save_checkpoint(path, job, *trained,
                              {1, trained->iteration(), 12, 0.5f, 0.7f, 4, 2, 1});
    BOOST_REQUIRE_MESSAGE(ok.ok(), (ok.ok() ? "" : ok.err().message));
    return path;
  }
};

template <class A, class B>
bool same(const A& a, const B& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
    .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Where `values` (their first 16 bytes) lie in a checkpoint file's bytes.
std::size_t offset_of(const std::vector<char>& file, std::span<const float> values) {
  const auto* pattern = reinterpret_cast<const char*>(values.data());
  const auto at = std::search(file.begin(), file.end(), pattern, pattern + 16);
  BOOST_REQUIRE(at != file.end());
  return static_cast<std::size_t>(at - file.begin());
}

kj::Array<capnp::word> words_of(const std::vector<char>& bytes) {
  auto words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), words.size() * sizeof(capnp::word));
  return words;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
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

BOOST_FIXTURE_TEST_CASE(truncated_checkpoint_is_refused_saying_so, fixture) {
  auto path = save("b.ckpt");
  const auto size = fs::file_size(path);
  fs::resize_file(path, size - 64);
  auto loaded = load_checkpoint(path);
  BOOST_REQUIRE(!loaded.ok());
  const auto& message = loaded.err().message;
  BOOST_TEST(message.find(path) != std::string::npos, message);
  BOOST_TEST(message.find("truncated: " + std::to_string(size - 64) + " bytes") != std::string::npos,
             message);
}

BOOST_FIXTURE_TEST_CASE(checkpoint_with_bytes_appended_is_refused_saying_where_it_ends, fixture) {
  auto path = save("appended.ckpt");
  const auto size = fs::file_size(path);
  {
    std::ofstream out{path, std::ios::binary | std::ios::app};
    const std::string mebibyte(std::size_t{1} << 20, '\0');
    out << mebibyte;
  }
  auto loaded = load_checkpoint(path);
  BOOST_REQUIRE(!loaded.ok());
  const auto& message = loaded.err().message;
  BOOST_TEST(message.find(path + ": 1048576 bytes follow the checkpoint's end (at byte "
                          + std::to_string(size) + ")")
               != std::string::npos,
             message);
  BOOST_TEST(message.find("appended") != std::string::npos, message);
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

BOOST_FIXTURE_TEST_CASE(one_flipped_bit_in_the_parameters_is_refused_naming_the_section_checksum,
                        fixture) {
  const auto path = save("flip.ckpt");
  auto bytes = file_bytes(path);
  bytes[offset_of(bytes, trained->net().parameters()) + 9] ^= 0x10;
  write_bytes(path, bytes);
  auto loaded = load_checkpoint(path);
  BOOST_REQUIRE(!loaded.ok());
  const auto& message = loaded.err().message;
  BOOST_TEST(contains(message, path), message);
  BOOST_TEST(contains(message, "checkpoint parameters section checksum mismatch"), message);
}

BOOST_FIXTURE_TEST_CASE(one_flipped_bit_in_the_progress_is_refused_naming_its_section, fixture) {
  auto ckpt = load_checkpoint(save("p.ckpt"));
  BOOST_REQUIRE(ckpt.ok());
  const auto path = save("progress.ckpt");
  auto bytes = file_bytes(path);
  // The progress's samplesSeen (12) is the only 12 stored as a little-endian 64-bit word.
  const char twelve[8] = {12, 0, 0, 0, 0, 0, 0, 0};
  const auto at = std::search(bytes.begin(), bytes.end(), twelve, twelve + 8);
  BOOST_REQUIRE(at != bytes.end());
  *at ^= 0x01;
  write_bytes(path, bytes);
  auto loaded = load_checkpoint(path);
  BOOST_REQUIRE(!loaded.ok());
  BOOST_TEST(contains(loaded.err().message, "checkpoint progress section checksum mismatch"),
             loaded.err().message);
}

BOOST_FIXTURE_TEST_CASE(no_single_bit_flip_loads_as_different_content, fixture) {
  const auto path = save("every_bit.ckpt");
  const auto original = file_bytes(path);
  auto reference = parse_checkpoint(path, words_of(original));
  BOOST_REQUIRE(reference.ok());
  const auto reference_job = capnp::canonicalize(reference->job.reader());
  std::size_t refused = 0;
  for (std::size_t bit = 0; bit < original.size() * 8; ++bit) {
    auto damaged = original;
    damaged[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    auto loaded = parse_checkpoint(path, words_of(damaged));
    if (!loaded.ok()) {
      ++refused;
      continue;
    }
    // Accepted only where the flip changed nothing read (padding, unused bits).
    BOOST_TEST_REQUIRE(same(loaded->parameters, reference->parameters), "bit " << bit);
    BOOST_TEST_REQUIRE(same(loaded->updater_state, reference->updater_state), "bit " << bit);
    BOOST_TEST_REQUIRE(same(loaded->layer_state, reference->layer_state), "bit " << bit);
    BOOST_TEST_REQUIRE(loaded->progress.iteration == reference->progress.iteration);
    BOOST_TEST_REQUIRE(loaded->progress.epoch == reference->progress.epoch);
    BOOST_TEST_REQUIRE(loaded->progress.samples_seen == reference->progress.samples_seen);
    BOOST_TEST_REQUIRE(loaded->progress.test_accuracy == reference->progress.test_accuracy);
    BOOST_TEST_REQUIRE(loaded->progress.test_loss == reference->progress.test_loss);
    const bool same_job = capnp::canonicalize(loaded->job.reader()).asBytes()
                          == reference_job.asBytes();
    BOOST_TEST_REQUIRE(same_job, "bit " << bit);
  }
  // Almost every bit is content or structure.
  BOOST_TEST(refused > original.size() * 8 * 9 / 10, refused << " of " << original.size() * 8);
}

BOOST_FIXTURE_TEST_CASE(checkpoint_of_format_version_1_is_refused_asking_to_train_again, fixture) {
  capnp::MallocMessageBuilder message;
  message.initRoot<schema::Checkpoint>().setFormatVersion(1);
  const auto words = capnp::messageToFlatArray(message);
  const auto path = (dir / "old.ckpt").string();
  std::ofstream(path, std::ios::binary)
    .write(reinterpret_cast<const char*>(words.asBytes().begin()),
           static_cast<std::streamsize>(words.asBytes().size()));
  auto loaded = load_checkpoint(path);
  BOOST_REQUIRE(!loaded.ok());
  const auto& text = loaded.err().message;
  BOOST_TEST(contains(text, "checkpoint format version 1 is not one this strom reads (2 to 3"),
             text);
  BOOST_TEST(contains(text, "train again"), text);
}

BOOST_FIXTURE_TEST_CASE(run_shape_is_kept_and_a_version_2_file_without_it_still_reads, fixture) {
  const auto path = save("shape.ckpt");
  auto loaded = load_checkpoint(path);
  BOOST_REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.err().message));
  BOOST_TEST(loaded->progress.workers == 4u);
  BOOST_TEST(loaded->progress.nodes == 2u);
  BOOST_TEST(loaded->progress.servers == 1u);

  // Version 2 wrote no run shape (and no checksum of one).
  const auto bytes = file_bytes(path);
  const auto words = words_of(bytes);
  capnp::FlatArrayMessageReader reader{words};
  capnp::MallocMessageBuilder message;
  message.setRoot(reader.getRoot<schema::Checkpoint>());
  auto old = message.getRoot<schema::Checkpoint>();
  old.setFormatVersion(2);
  static_cast<void>(old.disownRun());
  old.getChecksums().setRun(0);
  const auto old_words = capnp::messageToFlatArray(message);
  const auto old_path = (dir / "v2.ckpt").string();
  std::ofstream(old_path, std::ios::binary)
    .write(reinterpret_cast<const char*>(old_words.asBytes().begin()),
           static_cast<std::streamsize>(old_words.asBytes().size()));
  auto read = load_checkpoint(old_path);
  BOOST_REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.err().message));
  BOOST_TEST(read->progress.workers == 0u);
  BOOST_TEST(read->progress.epoch == 1u);
  BOOST_TEST(same(read->parameters, trained->net().parameters()));
}

BOOST_FIXTURE_TEST_CASE(nan_parameter_is_refused_naming_its_layer_and_index, fixture) {
  // The first dense layer has 6 x 8 weights then 8 biases: flat element 50 is its bias 2.
  trained->net().parameters()[50] = std::numeric_limits<float>::quiet_NaN();
  auto saved = load_checkpoint(save("nan.ckpt"));
  BOOST_REQUIRE_MESSAGE(saved.ok(), "the checksums hold: the file is as written");
  auto fresh = *compute::make_replica(saved->job.reader(), 0);
  const std::vector<float> before(fresh->net().parameters().begin(),
                                  fresh->net().parameters().end());
  auto ok = restore_checkpoint(*saved, *fresh);
  BOOST_REQUIRE(!ok.ok());
  const auto& text = ok.err().message;
  BOOST_TEST(contains(text, "checkpoint parameters element 50 is nan"), text);
  BOOST_TEST(contains(text, "layer 0, dense: its element 50 of 56"), text);
  BOOST_TEST(same(fresh->net().parameters(), before), "a refused checkpoint copied nothing");
}

BOOST_FIXTURE_TEST_CASE(infinite_updater_state_is_refused_naming_the_layer, fixture) {
  // Adam's state is m then v, each laid out like the parameters: this is v of element 60,
  // past dense (56) in batch normalization (layer 2: the relu is layer 1).
  const std::size_t parameters = trained->net().parameters().size();
  trained->updater_state()[parameters + 60] = std::numeric_limits<float>::infinity();
  auto saved = load_checkpoint(save("inf.ckpt"));
  BOOST_REQUIRE(saved.ok());
  auto fresh = *compute::make_replica(saved->job.reader(), 0);
  auto ok = restore_checkpoint(*saved, *fresh);
  BOOST_REQUIRE(!ok.ok());
  const auto& text = ok.err().message;
  BOOST_TEST(contains(text, "checkpoint updater state element " + std::to_string(parameters + 60)
                              + " is inf"),
             text);
  BOOST_TEST(contains(text, "layer 2, batch_normalization: its element 4 of 16"), text);
}

BOOST_FIXTURE_TEST_CASE(a_writer_killed_mid_write_leaves_the_previous_checkpoint_whole, fixture) {
  const auto path = save("killed.ckpt");
  // A child process writes the checkpoint over and over, a new epoch each time, and is
  // killed with SIGKILL at moments spread over its writes: what is at `path` afterwards is
  // always one whole checkpoint, never a torn one.
  compute::rng gen{11};
  std::uint32_t newest = 1;
  for (int kill = 0; kill < 12; ++kill) {
    const pid_t writer = ::fork();
    BOOST_REQUIRE(writer >= 0);
    if (writer == 0) {
      for (std::uint32_t epoch = 2;; ++epoch)
        if (!save_checkpoint(path, job, *trained, {epoch, trained->iteration(), 12, 0.5f, 0.7f}))
          ::_exit(3);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200 + gen.below(20000)));
    ::kill(writer, SIGKILL);
    int status = 0;
    ::waitpid(writer, &status, 0);
    BOOST_REQUIRE(WIFSIGNALED(status));
    auto loaded = load_checkpoint(path);
    BOOST_REQUIRE_MESSAGE(loaded.ok(),
                          "kill " << kill << ": " << (loaded.ok() ? "" : loaded.err().message));
    BOOST_TEST(same(loaded->parameters, trained->net().parameters()));
    newest = std::max(newest, loaded->progress.epoch);
  }
  BOOST_TEST(newest > 1u, "no write finished between the kills");
}
