#pragma once
// How a kvstore job's nodes are set up from its spec. A server node turns its shard
// assignment into parameter_shard setups: it parses the job it was sent, builds the model with
// the job's seed (the same initial parameters every worker builds), places the keys over the
// job's servers and keeps the ranges of this server, each with the job's updater and
// schedule. A worker node's trainers get the shards and the job's push encoding.

#include <vector>

#include "strom/actors/kvstore/kv_pusher.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/kvstore/parameter_shard.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::runtime {

/// The shards of server `work.server`: its own key ranges, and with work.replicas R a replica
/// of the ranges of the R - 1 servers before it (cyclically); errors name the job and what is
/// wrong with it here.
result<std::vector<actors::parameter_shard_setup>> prepare_shards(
  const actors::shard_assignment& work);

/// A worker's kvstore options: the shards of `entries` and the push encoding the job asks for
/// (`threshold` for strom's threshold encoding). MXNet's 2-bit threshold applies to a batch's
/// summed gradient (Gluon sums the loss over the batch and its optimizer rescales by
/// 1/batch); strom's gradients are batch means, so the encoder's threshold is
/// twoBitThreshold / `batch_size`.
actors::kv_options kv_options_of(schema::Distributed::Reader distributed,
                                 const std::vector<actors::kv_shard_entry>& entries,
                                 const compute::threshold_encoder_options& threshold,
                                 std::size_t batch_size);

/// "dist_sync" or "dist_async".
const char* to_string(schema::KvStoreSync sync);

} // namespace strom::runtime
