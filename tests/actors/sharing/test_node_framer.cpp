#define BOOST_TEST_MODULE actors_node_framer
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "strom/actors/sharing/node_framer.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/frames/update_frame.hpp"

using namespace strom;
using namespace strom::actors;

namespace {

constexpr std::size_t elements = 64;

/// What a worker that sent nothing hands over (below the threshold).
compute::encoded_update nothing() {
  return {compute::encoding::threshold, 0.5f, elements, 0, {}};
}

compute::frame_header header_of(const compute::frame& f) {
  compute::frame_workspace ws;
  auto view = compute::read_update_frame(f, ws);
  BOOST_REQUIRE_MESSAGE(view, (view ? "" : view.err().message));
  return view->header;
}

/// Frames `count` empty updates of `worker` and returns their clocks.
std::vector<std::uint64_t> clocks_of(node_framer& framer, std::uint32_t worker, int count) {
  std::vector<std::uint64_t> clocks;
  for (int k = 0; k < count; ++k) {
    auto framed = framer.frame(worker, 0, nothing());
    BOOST_REQUIRE(framed);
    clocks.push_back(header_of(framed->frame).iteration);
  }
  return clocks;
}

} // namespace

BOOST_AUTO_TEST_CASE(frames_each_workers_encoded_update_in_node_sequence) {
  node_framer framer{3, 2, elements, {}};
  // A worker's update 0.6 at the first 8 elements, encoded negated at 0.5.
  compute::threshold_encoder_options options;
  options.policy = compute::threshold_policy{compute::fixed_threshold_options{0.5f}};
  compute::threshold_encoder encoder{elements, options};
  std::vector<float> values(elements, 0.1f);
  std::fill(values.begin(), values.begin() + 8, 0.6f);
  const auto encoded = encoder.encode(values, -1.0f);
  BOOST_REQUIRE(encoded);
  std::vector<compute::frame> framed;
  for (std::uint32_t worker : {1u, 0u}) {
    auto f = framer.frame(worker, 2, *encoded);
    BOOST_REQUIRE_MESSAGE(f, (f ? "" : f.err().message));
    framed.push_back(f->frame);
  }
  compute::frame_workspace ws;
  for (std::uint64_t k = 0; k < framed.size(); ++k) {
    const auto header = header_of(framed[k]);
    BOOST_TEST(header.origin_node == 3u);
    BOOST_TEST(header.worker == (k == 0 ? 1u : 0u));
    BOOST_TEST(header.sequence == k);
    BOOST_TEST(header.epoch == 2u);
    // The clock: updates of the slowest worker included, 0 until both have sent one.
    BOOST_TEST(header.iteration == k);
    std::vector<float> model(elements, 0.0f);
    BOOST_REQUIRE(compute::apply_update_frame(framed[k], model, ws));
    for (std::size_t i = 0; i < elements; ++i)
      BOOST_TEST(model[i] == (i < 8 ? -0.5f : 0.0f));
  }
  const auto stats = framer.stats();
  BOOST_TEST(stats.updates == 2u);
  BOOST_TEST(stats.frames_sent == 2u);
  BOOST_TEST(stats.bytes_sent == framed[0].size() + framed[1].size());
  BOOST_TEST(stats.dense_bytes_equivalent == 2u * 4u * elements);
  BOOST_TEST(stats.density_sum == 2.0 * 8 / elements);
  BOOST_TEST(stats.threshold == 0.5f);
}

BOOST_AUTO_TEST_CASE(an_update_below_the_threshold_makes_an_empty_frame_that_moves_the_clock) {
  node_framer framer{4, 1, elements, {}};
  std::vector<compute::frame> framed;
  for (int k = 0; k < 2; ++k) {
    auto f = framer.frame(0, 0, nothing());
    BOOST_REQUIRE(f);
    framed.push_back(f->frame);
  }
  compute::frame_workspace ws;
  for (std::uint64_t k = 0; k < framed.size(); ++k) {
    auto view = compute::read_update_frame(framed[k], ws);
    BOOST_REQUIRE(view);
    BOOST_TEST(view->header.origin_node == 4u);
    BOOST_TEST(view->header.sequence == k);
    BOOST_TEST(view->header.iteration == k + 1);
    BOOST_TEST(view->payload.size() == 0u);
  }
  const auto stats = framer.stats();
  BOOST_TEST(stats.updates == 2u);
  BOOST_TEST(stats.frames_sent == 0u);  // nothing passed the threshold
  BOOST_TEST(stats.bytes_sent == framed[0].size() + framed[1].size());
}

BOOST_AUTO_TEST_CASE(clock_counts_the_slowest_worker_still_training) {
  node_framer framer{0, 2, elements, {}};
  BOOST_TEST(clocks_of(framer, 0, 2) == (std::vector<std::uint64_t>{0, 0}), "clocks");
  BOOST_TEST(clocks_of(framer, 1, 1) == (std::vector<std::uint64_t>{1}), "clocks");
  BOOST_TEST(!framer.finish(1));  // worker 1 is done: only worker 0 counts
  BOOST_TEST(clocks_of(framer, 0, 1) == (std::vector<std::uint64_t>{3}), "clocks");
}

BOOST_AUTO_TEST_CASE(the_last_worker_to_finish_ends_the_epoch_and_the_clock_restarts) {
  node_framer framer{0, 2, elements, {}};
  clocks_of(framer, 0, 3);
  clocks_of(framer, 1, 3);
  BOOST_TEST(!framer.finish(0));
  BOOST_TEST(framer.finish(1));
  BOOST_TEST(clocks_of(framer, 0, 1) == (std::vector<std::uint64_t>{0}), "clocks");
  BOOST_TEST(!framer.finish(0));  // the new epoch waits for both again
  BOOST_TEST(framer.finish(1));
}

BOOST_AUTO_TEST_CASE(refuses_a_malformed_update_naming_it_and_counts_nothing) {
  const std::uint32_t payload_word = 1;
  auto size = nothing();
  size.elements = elements + 1;
  auto enc = nothing();
  enc.enc = static_cast<compute::encoding>(9);
  auto values = nothing();
  values.values = 3;  // but no payload
  auto payload = nothing();
  payload.payload = std::as_bytes(std::span{&payload_word, 1});  // but no values
  struct malformed {
    std::uint32_t worker;
    compute::encoded_update update;
    std::string what;
  };
  for (const auto& [worker, update, what] :
       {malformed{2, nothing(), "worker 2"}, malformed{0, size, "65 elements"},
        malformed{0, enc, "encoding 9"}, malformed{0, values, "3 values"},
        malformed{0, payload, "0 values in 4 payload bytes"}}) {
    node_framer framer{0, 2, elements, {}};
    auto refused = framer.frame(worker, 0, update);
    BOOST_REQUIRE(!refused);
    BOOST_TEST(refused.err().message.find(what) != std::string::npos,
               refused.err().message << " names " << what);
    BOOST_TEST(framer.stats().updates == 0u);
    BOOST_TEST(header_of(framer.frame(0, 0, nothing())->frame).sequence == 0u);  // none used up
  }
}

BOOST_AUTO_TEST_CASE(workers_framing_at_once_get_distinct_sequence_numbers) {
  constexpr int per_worker = 500;
  node_framer framer{0, 2, elements, {}};
  std::vector<std::uint64_t> sequences[2];
  std::vector<std::thread> workers;
  for (std::uint32_t w = 0; w < 2; ++w)
    workers.emplace_back([&, w] {
      // No Boost.Test assertions off the main thread: record, check after the join.
      compute::frame_workspace ws;
      for (int k = 0; k < per_worker; ++k) {
        auto framed = framer.frame(w, 0, nothing());
        auto view = framed ? compute::read_update_frame(framed->frame, ws) : framed.err();
        sequences[w].push_back(view ? view->header.sequence : ~std::uint64_t{0});
      }
    });
  for (auto& worker : workers)
    worker.join();
  std::vector<std::uint64_t> all = sequences[0];
  all.insert(all.end(), sequences[1].begin(), sequences[1].end());
  std::sort(all.begin(), all.end());
  for (std::size_t k = 0; k < all.size(); ++k)
    BOOST_TEST(all[k] == k);
  BOOST_TEST(framer.stats().updates == 2u * per_worker);
}
