#include "strom/actors/checkpoint_keeper.hpp"

#include <fmt/format.h>

#include "strom/actors/errors.hpp"
#include "strom/actors/snapshot_transfer.hpp"

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
  if (st.incoming)
    return make_error(strom_error::snapshot_failed,
                      fmt::format("job {}: a checkpoint is being taken already", setup.job_id));
  // The node is a member the job_master chose, and the keeper has no model to bound the
  // size by; the assembler still checks every chunk against the first one's totals.
  st.incoming.emplace(compute::max_frame_bytes);
  auto promise = self->make_response_promise<snapshot_sent>();
  self->request(agent, setup.snapshot_timeout, snapshot_atom_v, setup.job_id,
                caf::actor_cast<caf::actor>(self))
    .then(
      [self, setup, promise](const snapshot_sent& sent) mutable {
        auto& st = self->state;
        auto encoded = compute::take_assembled(std::move(*st.incoming));
        st.incoming.reset();
        if (!encoded) {
          promise.deliver(make_error(strom_error::snapshot_failed,
                                     fmt::format("job {}: checkpoint refused: {}", setup.job_id,
                                                 encoded.err().message)));
        } else if (auto saved = setup.store->save_checkpoint(setup.job_id, *encoded); !saved) {
          promise.deliver(make_error(strom_error::state_failed, saved.err().message));
        } else {
          st.latest = std::move(*encoded);
          promise.deliver(sent);
        }
      },
      [self, promise](caf::error& err) mutable {
        self->state.incoming.reset();
        promise.deliver(std::move(err));
      });
  return promise;
}

/// Sends the latest checkpoint to `receiver` as chunks.
caf::result<snapshot_sent> serve(self_ptr self, const checkpoint_keeper_setup& setup,
                                 const caf::actor& receiver) {
  auto& st = self->state;
  if (!st.latest)
    return make_error(strom_error::snapshot_failed,
                      fmt::format("job {} has no checkpoint", setup.job_id));
  const auto bytes = st.latest->bytes();
  const std::uint64_t id = (setup.job_id << served_job_shift) | (++st.served & 0xffff);
  return send_in_chunks(receiver,
                        {reinterpret_cast<const capnp::word*>(bytes.data()),
                         bytes.size() / sizeof(capnp::word)},
                        id, fmt::format("job {}'s checkpoint", setup.job_id));
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
  return {
    [self, setup](checkpoint_atom, std::uint64_t job_id, const caf::actor& agent)
      -> caf::result<snapshot_sent> {
      if (auto err = foreign(setup, job_id))
        return err;
      return take(self, setup, agent);
    },
    [self](const snapshot_chunk& chunk) {
      // The assembler remembers a refused chunk and refuses the rest; take says so.
      if (self->state.incoming)
        static_cast<void>(self->state.incoming->add(chunk.value));
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
