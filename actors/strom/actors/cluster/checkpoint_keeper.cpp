#include "strom/actors/cluster/checkpoint_keeper.hpp"

#include <fmt/format.h>

#include "strom/actors/errors.hpp"
#include "strom/actors/worker/snapshot_transfer.hpp"

namespace strom::actors {

namespace {

using self_ptr = caf::stateful_actor<checkpoint_keeper_state>*;

/// Ids of the snapshots a keeper serves: the job id above the count, apart from the ids
/// trainers give theirs (node id in the high half, trainer_snapshot.cpp) only in what a
/// receiver logs; a receiver assembles one snapshot at a time.
constexpr unsigned served_job_shift = 16;

/// Asks `agent` for its node's snapshot of the job and saves it as the job's checkpoint.
caf::result<snapshot_sent> take(self_ptr self, const checkpoint_keeper_setup& setup,
                                const caf::actor& agent) {
  auto& st = self->state;
  if (!setup.store)
    return make_error(strom_error::snapshot_failed,
                      fmt::format("job {}: no state directory to keep checkpoints in",
                                  setup.job_id));
  if (st.taking)
    return make_error(strom_error::snapshot_failed,
                      fmt::format("job {}: a checkpoint is being taken already", setup.job_id));
  // The node is a member the job_master chose, and the keeper has no model to bound the
  // size by; the assembler still checks every chunk against the first one's totals.
  auto promise = self->make_response_promise();
  st.taking.emplace(snapshot_receipt{compute::snapshot_assembler{compute::max_frame_bytes},
                                     promise, agent.address()});
  // A request to a node that dies is never answered: its down message ends the wait.
  self->monitor(agent);
  self->request(agent, setup.snapshot_timeout, snapshot_atom_v, setup.job_id,
                caf::actor_cast<caf::actor>(self))
    .then(
      [self, setup, agent](const snapshot_sent& sent) {
        auto& st = self->state;
        auto taking = settle(self, st.taking, agent);
        if (!taking)
          return;  // given up at the node's loss
        auto encoded = compute::take_assembled(std::move(taking->incoming));
        if (!encoded) {
          taking->promise.deliver(make_error(strom_error::snapshot_failed,
                                             fmt::format("job {}: checkpoint refused: {}",
                                                         setup.job_id, encoded.err().message)));
        } else if (auto saved = setup.store->save_checkpoint(setup.job_id, *encoded); !saved) {
          taking->promise.deliver(make_error(strom_error::state_failed, saved.err().message));
        } else {
          st.latest = std::move(*encoded);
          taking->promise.deliver(sent);
        }
      },
      [self, agent](caf::error& err) {
        if (auto taking = settle(self, self->state.taking, agent))
          taking->promise.deliver(std::move(err));
      });
  return caf::delegated<snapshot_sent>{};
}

/// Sends the latest checkpoint to `receiver` as chunks.
caf::result<snapshot_sent> serve(self_ptr self, const checkpoint_keeper_setup& setup,
                                 const caf::actor& receiver) {
  auto& st = self->state;
  if (!st.latest)
    return make_error(strom_error::snapshot_failed,
                      fmt::format("job {} has no checkpoint", setup.job_id));
  const std::uint64_t id = (setup.job_id << served_job_shift) | (++st.served & 0xffff);
  return send_in_chunks(receiver, st.latest->words(), id,
                        fmt::format("job {}'s checkpoint", setup.job_id));
}

/// The refusal of a request about another job than the keeper's.
caf::error foreign(const checkpoint_keeper_setup& setup, std::uint64_t job_id) {
  if (job_id == setup.job_id)
    return caf::none;
  return make_error(strom_error::snapshot_failed,
                    fmt::format("the keeper of job {} keeps no job {}", setup.job_id, job_id));
}

} // namespace

caf::behavior checkpoint_keeper(caf::stateful_actor<checkpoint_keeper_state>* self,
                                checkpoint_keeper_setup setup) {
  self->state.latest = setup.latest;
  self->set_down_handler([self, setup](const caf::down_msg& down) {
    give_up_if_from(self->state.taking, down,
                    make_error(strom_error::snapshot_failed,
                               fmt::format("job {}: the node sending the checkpoint went away",
                                           setup.job_id)));
  });
  return {
    [self, setup](checkpoint_atom, std::uint64_t job_id, const caf::actor& agent)
      -> caf::result<snapshot_sent> {
      if (auto err = foreign(setup, job_id))
        return err;
      return take(self, setup, agent);
    },
    [self](const snapshot_chunk& chunk) {
      // The assembler remembers a refused chunk and refuses the rest; take says so.
      if (self->state.taking)
        static_cast<void>(self->state.taking->incoming.add(chunk.value));
    },
    [self, setup](snapshot_atom, std::uint64_t job_id, const caf::actor& receiver)
      -> caf::result<snapshot_sent> {
      if (auto err = foreign(setup, job_id))
        return err;
      return serve(self, setup, receiver);
    },
  };
}

} // namespace strom::actors
