#include "strom/runtime/kv_store.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <typeindex>

#include <capnp/message.h>
#include <caf/all.hpp>

#include "strom/actors/kvstore/kv_client_agent.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"
#include "strom/log.hpp"
#include "strom/runtime/job/capnp_text_file.hpp"
#include "strom/runtime/kv_key_directory.hpp"
#include "strom/runtime/stop_actors.hpp"

namespace strom {

namespace {

/// An updater is one small struct: a few hundred bytes of text and 4 levels of nesting
/// (updater > schedule > step > value) are all it takes; 16 leaves room for schema growth.
constexpr runtime::text_file_kind updater_text_kind{"updater", 64 * 1024, 16, 5};

/// Time for the shards and the client agents to quit once told to.
constexpr auto stop_wait = std::chrono::seconds(10);

/// Throws std::invalid_argument with "kv_store_options.FIELD: problem".
[[noreturn]] void refuse(std::string_view field, const std::string& problem) {
  throw std::invalid_argument(fmt::format("kv_store_options.{}: {}", field, problem));
}

/// The shards' template: every option checked, the updater parsed and built.
runtime::kv_shard_template shard_template(const kv_store_options& options) {
  for (const auto& [field, count] : {std::pair{"servers", options.servers},
                                     std::pair{"workers", options.workers}})
    if (count == 0 || count > max_kv_store_members)
      refuse(field, fmt::format("{} is outside 1..{}", count, max_kv_store_members));
  if (options.big_array_bound == 0)
    refuse("big_array_bound", "must be at least 1, got 0");
  if (options.timeout.count() <= 0)
    refuse("timeout", fmt::format("must be positive, got {} ms", options.timeout.count()));
  if (!(std::isfinite(options.two_bit_threshold) && options.two_bit_threshold > 0.0f))
    refuse("two_bit_threshold", fmt::format("must be a positive number, got {}",
                                            options.two_bit_threshold));
  if (!options.server_optimizer && options.sync == actors::kv_sync::dist_async)
    refuse("server_optimizer",
           "false needs dist_sync: in dist_async the workers' own updaters would drift apart");

  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::Updater>();
  if (auto decoded = runtime::decode_capnp_text(options.updater, "kv_store_options.updater",
                                                updater_text_kind, capnp::toDynamic(spec));
      !decoded)
    throw std::invalid_argument(decoded.err().message);
  auto rule = compute::make_updater(spec.asReader());
  auto schedule = compute::make_schedule(spec.asReader());
  if (!rule || !schedule)
    refuse("updater", rule ? schedule.err().message : rule.err().message);
  if (schedule->kind() != compute::schedule_kind::fixed
      && schedule->unit() == compute::schedule_unit::epoch)
    refuse("updater", "schedule.unit epoch: a kv_store counts no epochs, use unit = iteration");

  runtime::kv_shard_template shards;
  shards.servers = options.servers;
  for (std::uint32_t rank = 0; rank < options.workers; ++rank)
    shards.workers.push_back(actors::kv_worker_id(rank, 0));
  shards.big_array_bound = options.big_array_bound;
  shards.rule = std::move(*rule);
  shards.schedule = *schedule;
  shards.sync = options.sync;
  shards.server_optimizer = options.server_optimizer;
  return shards;
}

} // namespace

kv_store::kv_store(caf::actor_system& system, kv_store_options options)
  : system_(system), options_(std::move(options)) {
  if (system_.config().type_names_by_rtti.count(std::type_index(typeid(actors::kv_push))) == 0)
    throw std::invalid_argument(
      "strom::kv_store: the actor system lacks strom's message types; call "
      "strom::runtime::configure_for_strom(config) before creating the actor_system");
  keys_ = std::make_shared<runtime::kv_key_directory>(system_, shard_template(options_));
  agents_.resize(options_.workers);
  inboxes_.resize(options_.workers);
}

kv_store::~kv_store() {
  // Calls made from now on fail at once; then the agents, which fail the calls they hold,
  // and the shards.
  std::vector<caf::actor> running;
  {
    std::lock_guard lock{agents_mutex_};
    for (auto& inbox : inboxes_)
      if (inbox)
        inbox->close("the kv_store is closed");
    for (auto& agent : agents_)
      if (agent)
        running.push_back(std::move(agent));
  }
  for (auto& shard : keys_->close())
    running.push_back(std::move(shard));
  if (const auto left = runtime::stop_actors(system_, running, stop_wait); left > 0)
    log::warning("strom::kv_store: {} of its actors did not quit within {} s", left,
                 stop_wait.count());
}

kv_client kv_store::client(std::uint32_t rank) {
  std::lock_guard lock{agents_mutex_};
  if (rank >= agents_.size())
    throw std::invalid_argument(fmt::format("strom::kv_store: rank {} is outside 0..{}", rank,
                                            agents_.size() - 1));
  if (agents_[rank])
    throw std::invalid_argument(
      fmt::format("strom::kv_store: rank {} has a client already (one per rank)", rank));
  actors::kv_client_agent_setup setup;
  setup.rank = rank;
  setup.worker = actors::kv_worker_id(rank, 0);
  setup.inbox = std::make_shared<actors::kv_call_inbox>(rank);
  setup.encoding.compression = options_.compression;
  setup.encoding.two_bit.threshold = options_.two_bit_threshold;
  setup.encoding.server_optimizer = options_.server_optimizer;
  setup.timeout = options_.timeout;
  inboxes_[rank] = setup.inbox;
  agents_[rank] = system_.spawn(actors::kv_client_agent, std::move(setup));
  return kv_client{rank, keys_, inboxes_[rank], agents_[rank]};
}

std::vector<caf::actor> kv_store::shards(std::uint32_t key) const {
  return keys_->shards_of(key);
}

} // namespace strom
