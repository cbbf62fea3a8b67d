#include "strom/actors/kvstore/kv_client_agent.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"

namespace strom::actors {

namespace {

using agent_ptr = caf::stateful_actor<kv_client_agent_state>*;

/// dist_sync steps of a kv_client all belong to one round: a host has no epochs to tell.
constexpr std::uint32_t client_round = 0;

/// Milliseconds, for messages.
long long millis(caf::timespan span) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(span).count();
}

void start_next(agent_ptr self, std::uint32_t key);

/// Keeps the running call's promise once none of its ranges is awaited, then starts the next.
void finish_if_answered(agent_ptr self, std::uint32_t key) {
  auto& lane = self->state.lanes[key];
  const bool awaiting = std::find(lane.awaited.begin(), lane.awaited.end(), true)
                        != lane.awaited.end();
  if (!lane.running || awaiting)
    return;
  auto& call = lane.waiting.front();
  if (lane.failure.empty())
    call.done.set_value();
  else
    fail(call, self->state.setup.rank, lane.failure);
  lane.waiting.pop_front();
  lane.running = false;
  start_next(self, key);
}

/// Range `index` of the running call answered (`failure` empty) or failed.
void take_answer(agent_ptr self, std::uint32_t key,
                 std::uint64_t serial, std::size_t index, const std::string& failure) {
  auto& lane = self->state.lanes[key];
  // An answer after its call ended (its shard ended first) belongs to no call any more.
  if (!lane.running || lane.serial != serial || !lane.awaited.at(index))
    return;
  lane.awaited[index] = false;
  if (!failure.empty() && lane.failure.empty()) {
    const auto& range = lane.waiting.front().shards[index].range;
    lane.failure = fmt::format("part {} (values {}..{}): {}", range.part, range.offset,
                               range.offset + range.count, failure);
  }
  finish_if_answered(self, key);
}

/// What a failed request means, for a call's error.
std::string request_failure(agent_ptr self, const caf::error& err) {
  if (err == caf::sec::request_timeout)
    return fmt::format("no answer within {} ms (in dist_sync a step waits for a push of every "
                       "worker)",
                       millis(self->state.setup.timeout));
  if (err == caf::sec::request_receiver_down)
    return "its parameter shard has ended";
  return error_text(self->system(), err);
}

/// Sends range `index` of the running call (a push or a pull) and awaits its answer.
void send_part(agent_ptr self, std::uint32_t key,
               std::size_t index) {
  const auto& setup = self->state.setup;
  auto& lane = self->state.lanes[key];
  auto& call = lane.waiting.front();
  const auto serial = lane.serial;
  const auto& shard = call.shards[index].shard;
  auto on_error = [self, key, serial, index](const caf::error& err) {
    take_answer(self, key, serial, index, request_failure(self, err));
  };
  if (call.what == kv_call::kind::pull) {
    self->request(shard, setup.timeout, kv_pull_atom_v)
      .then(
        [self, key, serial, index](const kv_values& answer) {
          auto& running = self->state.lanes[key];
          if (!running.running || running.serial != serial || !running.awaited.at(index))
            return;
          auto taken = running.pusher->take(index, answer, running.waiting.front().out);
          take_answer(self, key, serial, index, taken ? "" : taken.err().message);
        },
        on_error);
    return;
  }
  auto push = lane.pusher->push(index, setup.worker, client_round, lane.step, call.gradient);
  if (!push) {
    take_answer(self, key, serial, index, push.err().message);
    return;
  }
  self->request(shard, setup.timeout, std::move(*push))
    .then([self, key, serial, index](const kv_values&) {
            take_answer(self, key, serial, index, "");
          },
          on_error);
}

/// Watches the shards of `call` so that one ending fails the call at once rather than at
/// its timeout: a dist_sync shard that ends while it holds a push never answers it.
void watch_shards(agent_ptr self, const kv_call& call) {
  for (const auto& ref : call.shards)
    if (self->state.watched.emplace(ref.shard.address(), call.key).second)
      self->monitor(ref.shard);
}

/// Runs the next waiting call of `key`, if none runs.
void start_next(agent_ptr self, std::uint32_t key) {
  auto& lane = self->state.lanes[key];
  if (lane.running || lane.waiting.empty())
    return;
  auto& call = lane.waiting.front();
  if (!lane.pusher) {
    auto options = self->state.setup.encoding;
    options.shards = call.shards;
    lane.pusher = std::make_unique<kv_pusher>(options);
  }
  watch_shards(self, call);
  lane.running = true;
  ++lane.serial;
  lane.failure.clear();
  lane.awaited.assign(call.shards.size(), true);
  if (call.what == kv_call::kind::push)
    ++lane.step;
  // A part that fails at once may end the call (and start the next) within the loop.
  const auto serial = lane.serial;
  const auto parts = call.shards.size();
  for (std::size_t i = 0; i < parts && lane.serial == serial; ++i)
    send_part(self, key, i);
}

/// A watched shard ended: the running call of its key fails for each range it held.
void shard_ended(agent_ptr self, const caf::down_msg& down) {
  const auto found = self->state.watched.find(down.source);
  if (found == self->state.watched.end())
    return;
  const auto key = found->second;
  self->state.watched.erase(found);
  auto& lane = self->state.lanes[key];
  if (!lane.running)
    return;
  const auto shards = lane.waiting.front().shards;
  const auto why = "its parameter shard ended: " + error_text(self->system(), down.reason);
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (shards[i].shard.address() == down.source)
      take_answer(self, key, lane.serial, i, why);
}

} // namespace

const char* to_string(kv_call::kind what) noexcept {
  return what == kv_call::kind::push ? "push" : "pull";
}

std::string kv_call_text(std::uint32_t rank, std::string_view what, std::uint32_t key,
                         std::size_t values) {
  return fmt::format("kv_client rank {}: {} of key {} ({} values)", rank, what, key, values);
}

void fail(kv_call& call, std::uint32_t rank, const std::string& why) {
  const auto values = call.what == kv_call::kind::push ? call.gradient.size() : call.out.size();
  call.done.set_exception(std::make_exception_ptr(std::runtime_error(
    kv_call_text(rank, to_string(call.what), call.key, values) + ": " + why)));
}

void kv_call_inbox::post(kv_call call) {
  std::unique_lock lock{mutex_};
  if (!closed_) {
    calls_.push_back(std::move(call));
    return;
  }
  const auto why = closed_why_;
  lock.unlock();
  fail(call, rank_, why);
}

std::vector<kv_call> kv_call_inbox::take() {
  std::lock_guard lock{mutex_};
  return std::exchange(calls_, {});
}

void kv_call_inbox::close(const std::string& why) {
  std::vector<kv_call> left;
  {
    std::lock_guard lock{mutex_};
    if (!closed_)
      closed_why_ = why;
    closed_ = true;
    left = std::exchange(calls_, {});
  }
  for (auto& call : left)
    fail(call, rank_, why);
}

kv_client_agent_state::~kv_client_agent_state() {
  if (!setup.inbox)
    return;
  const std::string why = "the kv_store closed before the call ended";
  setup.inbox->close(why);
  for (auto& [key, lane] : lanes)
    for (auto& call : lane.waiting)
      fail(call, setup.rank, why);
}

caf::behavior kv_client_agent(caf::stateful_actor<kv_client_agent_state>* self,
                              kv_client_agent_setup setup) {
  self->state.setup = std::move(setup);
  self->set_down_handler([self](const caf::down_msg& down) { shard_ended(self, down); });
  return {
    [self](kv_calls_atom) {
      for (auto& call : self->state.setup.inbox->take()) {
        const auto key = call.key;
        self->state.lanes[key].waiting.push_back(std::move(call));
        start_next(self, key);
      }
    },
  };
}

} // namespace strom::actors
