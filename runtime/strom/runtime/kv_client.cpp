#include "strom/runtime/kv_client.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include <caf/all.hpp>

#include "strom/actors/kvstore/kv_client_agent.hpp"
#include "strom/runtime/kv_key_directory.hpp"

namespace strom {

namespace {

/// A future that is ready at once with an error of call `what` of rank `rank` on `key`.
std::future<void> failed(std::uint32_t rank, const char* what, std::uint32_t key,
                         std::size_t values, const std::string& why) {
  std::promise<void> done;
  done.set_exception(std::make_exception_ptr(
    std::runtime_error(actors::kv_call_text(rank, what, key, values) + ": " + why)));
  return done.get_future();
}

/// Queues `call` for the client's agent and wakes it.
std::future<void> queue(actors::kv_call_inbox& inbox, const caf::actor& agent,
                        actors::kv_call call) {
  auto ready = call.done.get_future();
  inbox.post(std::move(call));
  caf::anon_send(agent, actors::kv_calls_atom_v);
  return ready;
}

} // namespace

kv_client::kv_client(std::uint32_t rank, std::shared_ptr<runtime::kv_key_directory> keys,
                     std::shared_ptr<actors::kv_call_inbox> inbox, caf::actor agent)
  : rank_(rank), keys_(std::move(keys)), inbox_(std::move(inbox)), agent_(std::move(agent)) {
}

std::future<void> kv_client::init(std::uint32_t key, std::span<const float> values) {
  if (auto shards = keys_->init(key, values); !shards)
    return failed(rank_, "init", key, values.size(), shards.err().message);
  std::promise<void> done;
  done.set_value();
  return done.get_future();
}

std::future<void> kv_client::push(std::uint32_t key, std::span<const float> gradient) {
  auto shards = keys_->find(key, gradient.size());
  if (!shards)
    return failed(rank_, "push", key, gradient.size(), shards.err().message);
  actors::kv_call call;
  call.what = actors::kv_call::kind::push;
  call.key = key;
  call.shards = std::move(*shards);
  call.gradient.assign(gradient.begin(), gradient.end());
  return queue(*inbox_, agent_, std::move(call));
}

std::future<void> kv_client::pull(std::uint32_t key, std::span<float> out) {
  auto shards = keys_->find(key, out.size());
  if (!shards)
    return failed(rank_, "pull", key, out.size(), shards.err().message);
  actors::kv_call call;
  call.what = actors::kv_call::kind::pull;
  call.key = key;
  call.shards = std::move(*shards);
  call.out = out;
  return queue(*inbox_, agent_, std::move(call));
}

} // namespace strom
