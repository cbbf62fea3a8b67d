#include "strom/runtime/kv_key_directory.hpp"

#include <fmt/format.h>

#include <caf/all.hpp>

namespace strom::runtime {

namespace {

/// Why a closed directory refuses.
constexpr const char* closed_text = "the kv_store is closed";

} // namespace

kv_key_directory::kv_key_directory(caf::actor_system& system, kv_shard_template shards)
  : system_(system), template_(std::move(shards)) {
}

result<std::vector<actors::kv_shard_ref>> kv_key_directory::init(std::uint32_t key,
                                                                 std::span<const float> values) {
  std::lock_guard lock{mutex_};
  if (closed_)
    return error{closed_text};
  if (const auto known = keys_.find(key); known != keys_.end()) {
    if (known->second.values != values.size())
      return error{fmt::format("the key holds {} values already", known->second.values)};
    return known->second.shards;
  }
  if (values.empty())
    return error{"a key needs at least one value"};
  // The key is its own flat buffer: its ranges' offsets count from its first value.
  auto placed = compute::place_keys({{key, 0, values.size()}}, template_.servers,
                                    template_.big_array_bound);
  if (!placed)
    return placed.err();
  key_entry entry{values.size(), {}};
  for (const auto& range : *placed) {
    actors::parameter_shard_setup setup;
    setup.range = range;
    const auto initial = values.subspan(range.offset, range.count);
    setup.initial.assign(initial.begin(), initial.end());
    setup.rule = template_.rule;
    setup.schedule = template_.schedule;
    setup.sync = template_.sync;
    setup.server_optimizer = template_.server_optimizer;
    auto shard = system_.spawn(actors::parameter_shard, std::move(setup));
    if (template_.sync == actors::kv_sync::dist_sync)
      caf::anon_send(shard, actors::kv_round{0, 0, template_.workers});
    entry.shards.push_back({range, std::move(shard)});
  }
  return keys_.emplace(key, std::move(entry)).first->second.shards;
}

result<std::vector<actors::kv_shard_ref>> kv_key_directory::find(std::uint32_t key,
                                                                 std::size_t values) const {
  std::lock_guard lock{mutex_};
  if (closed_)
    return error{closed_text};
  const auto known = keys_.find(key);
  if (known == keys_.end())
    return error{"no such key (init it first)"};
  if (known->second.values != values)
    return error{fmt::format("the key holds {} values", known->second.values)};
  return known->second.shards;
}

std::vector<caf::actor> kv_key_directory::shards_of(std::uint32_t key) const {
  std::lock_guard lock{mutex_};
  std::vector<caf::actor> shards;
  if (const auto known = keys_.find(key); known != keys_.end())
    for (const auto& ref : known->second.shards)
      shards.push_back(ref.shard);
  return shards;
}

std::vector<caf::actor> kv_key_directory::close() {
  std::lock_guard lock{mutex_};
  closed_ = true;
  std::vector<caf::actor> shards;
  for (const auto& [key, entry] : keys_)
    for (const auto& ref : entry.shards)
      shards.push_back(ref.shard);
  keys_.clear();
  return shards;
}

} // namespace strom::runtime
