#define BOOST_TEST_MODULE runtime_state_dir
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "strom/runtime/job/state_dir.hpp"
#include "support/scratch_dir.hpp"

// A scheduler's state directory: its record and its jobs' checkpoints come back as written,
// and a file that is missing a piece, damaged or someone else's is refused naming the file.

using namespace strom;
using strom::test::scratch;

namespace {

actors::scheduler_record sample_record() {
  actors::scheduler_record record;
  record.restarts = 2;
  record.next_node_id = 7;
  record.next_job_id = 3;
  record.membership_epoch = 11;
  record.incarnations = {{"w1", 2}, {"w2", 1}};
  actors::saved_job job;
  job.job_id = 2;
  job.submission.job_text = "(name = \"j\")";
  job.submission.source = "j.job";
  job.submission.min_nodes = 2;
  job.node_names = {"w1", "w2"};
  job.epochs_done = 3;
  job.report.train_samples = 180000;
  job.report.test_accuracy = 0.87;
  job.restarts = 1;
  record.jobs.push_back(job);
  actors::job_finished done;
  done.job_id = 1;
  done.succeeded = true;
  done.report.epochs = 5;
  record.outcomes.push_back(done);
  return record;
}

std::shared_ptr<runtime::state_dir_store> opened(const scratch& dir) {
  auto store = runtime::state_dir_store::open((dir.path() / "state").string());
  BOOST_REQUIRE_MESSAGE(store, (store ? "" : store.err().message));
  return *store;
}

std::string state_file(const scratch& dir) { return (dir.path() / "state/scheduler.state").string(); }

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, {}};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream{path, std::ios::binary | std::ios::trunc}.write(bytes.data(),
                                                              static_cast<long>(bytes.size()));
}

/// The error loading the record gives once `damage` changed the file's bytes.
std::string refusal_after(const std::function<void(std::vector<char>&)>& damage) {
  scratch dir;
  auto store = opened(dir);
  BOOST_REQUIRE(store->save(sample_record()));
  auto bytes = bytes_of(state_file(dir));
  damage(bytes);
  write_bytes(state_file(dir), bytes);
  auto loaded = store->load();
  BOOST_REQUIRE(!loaded);
  BOOST_TEST(loaded.err().message.find(state_file(dir)) != std::string::npos,
             loaded.err().message);
  return loaded.err().message;
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_new_directory_holds_no_record) {
  scratch dir;
  auto loaded = opened(dir)->load();
  BOOST_REQUIRE(loaded);
  BOOST_TEST(!loaded->has_value());
}

BOOST_AUTO_TEST_CASE(a_saved_record_comes_back_as_it_was) {
  scratch dir;
  auto store = opened(dir);
  BOOST_REQUIRE(store->save(sample_record()));
  auto loaded = opened(dir)->load();  // a new store on the same directory: a restart
  BOOST_REQUIRE(loaded);
  BOOST_REQUIRE(loaded->has_value());
  const auto& record = **loaded;
  BOOST_TEST(record.restarts == 2u);
  BOOST_TEST(record.next_node_id == 7u);
  BOOST_TEST(record.membership_epoch == 11u);
  BOOST_TEST(record.incarnations.at("w1") == 2u);
  BOOST_REQUIRE_EQUAL(record.jobs.size(), 1u);
  BOOST_TEST(record.jobs[0].submission.job_text == "(name = \"j\")");
  BOOST_TEST((record.jobs[0].node_names == std::vector<std::string>{"w1", "w2"}));
  BOOST_TEST(record.jobs[0].epochs_done == 3u);
  BOOST_TEST(record.jobs[0].report.test_accuracy == 0.87);
  BOOST_REQUIRE_EQUAL(record.outcomes.size(), 1u);
  BOOST_TEST(record.outcomes[0].succeeded);
}

BOOST_AUTO_TEST_CASE(a_damaged_record_is_refused) {
  const auto why = refusal_after([](std::vector<char>& bytes) { bytes[bytes.size() / 2] ^= 0x10; });
  BOOST_TEST(mentions(why, "damaged: its CRC-32 does not match"), why);
}

BOOST_AUTO_TEST_CASE(a_truncated_record_is_refused) {
  const auto cut = refusal_after([](std::vector<char>& bytes) { bytes.resize(bytes.size() - 5); });
  BOOST_TEST(mentions(cut, "truncated"), cut);
  const auto stub = refusal_after([](std::vector<char>& bytes) { bytes.resize(10); });
  BOOST_TEST(mentions(stub, "shorter than its 24-byte header"), stub);
}

BOOST_AUTO_TEST_CASE(a_foreign_file_is_refused) {
  const auto why = refusal_after([](std::vector<char>& bytes) { bytes[0] = 'X'; });
  BOOST_TEST(mentions(why, "not a strom scheduler state"), why);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_comes_back_byte_for_byte_and_a_damaged_one_is_refused) {
  scratch dir;
  auto store = opened(dir);
  std::vector<std::byte> words(64);
  words[0] = std::byte{0};  // stream header: one segment ...
  words[4] = std::byte{7};  // ... of 7 words
  for (std::size_t i = 8; i < words.size(); ++i)
    words[i] = std::byte(i);
  auto encoded = compute::frame::from_bytes(words);
  BOOST_REQUIRE(encoded);
  BOOST_REQUIRE(store->save_checkpoint(4, *encoded));
  auto loaded = store->load_checkpoint(4);
  BOOST_REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.err().message));
  BOOST_TEST(std::equal(loaded->bytes().begin(), loaded->bytes().end(), words.begin(), words.end()));
  const auto path = (dir.path() / "state/job-4.checkpoint").string();
  auto bytes = bytes_of(path);
  bytes.back() ^= 1;
  write_bytes(path, bytes);
  auto damaged = store->load_checkpoint(4);
  BOOST_REQUIRE(!damaged);
  BOOST_TEST(mentions(damaged.err().message, path + ": job checkpoint damaged"),
             damaged.err().message);
  store->drop_checkpoint(4);
  BOOST_TEST(!std::filesystem::exists(path));
}
