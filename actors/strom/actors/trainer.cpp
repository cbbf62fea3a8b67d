#include "strom/actors/trainer.hpp"

#include <algorithm>
#include <atomic>

#include "strom/log.hpp"

namespace strom::actors {

namespace {

/// A free buffer from the pool, or a new one while every buffer is still in flight (only
/// during warm-up: the accumulator releases each buffer once it has summed it).
std::shared_ptr<std::vector<float>>& free_buffer(trainer_state& st, std::size_t elements) {
  for (auto& buffer : st.pool) {
    if (buffer.use_count() == 1) {
      // Pairs with the release in the accumulator's last shared_ptr decrement, so its reads
      // of the buffer happen before our next write.
      std::atomic_thread_fence(std::memory_order_acquire);
      return buffer;
    }
  }
  return st.pool.emplace_back(std::make_shared<std::vector<float>>(elements));
}

caf::error describe(std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return caf::make_error(caf::sec::runtime_error, std::string{"trainer: "} + e.what());
  } catch (...) {
    return caf::make_error(caf::sec::runtime_error, "trainer: unknown exception");
  }
}

/// The entry of `origin`, or null for a node that is not in the setup.
origin_progress* find_origin(trainer_state& st, std::uint64_t origin) {
  for (auto& entry : st.origins)
    if (entry.origin == origin)
      return &entry;
  return nullptr;
}

/// Whether the next update (the (batches + 1)-th of the epoch) may be computed: every origin
/// has drained the epoch or its clock (the updates of its slowest worker that its applied
/// frames include) is at least batches - staleness.
///
/// Why staleness >= 1 cannot deadlock: a round holds at most one update per worker (a
/// worker's second update closes the round), so of a worker's j updates at most one (the
/// newest, in the open round) is not yet in a sent frame. Take the waiting trainer with the
/// fewest updates, j. Every worker still training at an origin that has not drained has
/// computed at least j updates (it waits at j or more; a worker that finished its share no
/// longer counts for the clock, and once all have, the origin drains), so the origin's
/// frames include at least j - 1 of each: its clock reaches j - 1 >= j - staleness at every
/// trainer and that trainer resumes. Staleness 0 would require the open round, which may be
/// waiting for this very trainer's next update.
bool may_step(const trainer_state& st, std::uint32_t staleness) {
  for (const auto& entry : st.origins) {
    if (entry.drained > st.epoch)
      continue;
    const std::uint64_t clock = entry.clock_epoch == st.epoch ? entry.clock : 0;
    if (clock + staleness < st.batches)
      return false;
  }
  return true;
}

/// Resumes a parked step once the bound allows it. The step goes to the back of the mailbox,
/// behind frames that are already queued.
void resume_if_allowed(caf::stateful_actor<trainer_state>* self, const trainer_setup& setup) {
  auto& st = self->state;
  if (st.waiting && may_step(st, setup.staleness)) {
    st.waiting = false;
    self->send(self, step_atom_v);
  }
}

} // namespace

caf::behavior trainer(caf::stateful_actor<trainer_state>* self, trainer_setup setup) {
  self->set_exception_handler(
    [](caf::scheduled_actor*, std::exception_ptr& failure) { return describe(failure); });
  if (setup.staleness == 0 || setup.origins.empty()) {
    self->quit(caf::make_error(caf::sec::invalid_argument,
                               "trainer: staleness must be >= 1 and origins non-empty, got "
                                 + std::to_string(setup.staleness) + " and "
                                 + std::to_string(setup.origins.size()) + " origins"));
    return {};
  }
  for (const auto origin : setup.origins)
    self->state.origins.push_back(origin_progress{origin});
  return {
    [self, setup](start_atom, std::uint32_t epoch) {
      auto& st = self->state;
      auto order = compute::epoch_order(setup.share, setup.seed, epoch, setup.shuffle);
      if (st.loader)
        st.loader->reset(std::move(order));
      else
        st.loader = std::make_unique<compute::batch_loader>(*setup.train, std::move(order),
                                                            setup.batch_size);
      st.epoch = epoch;
      st.waiting = false;
      st.loss_sum = 0.0;
      st.batches = 0;
      st.samples = 0;
      self->send(self, step_atom_v);
    },
    [self, setup](step_atom) {
      auto& st = self->state;
      if (!may_step(st, setup.staleness)) {
        st.waiting = true;
        return;
      }
      auto& replica = *setup.replica;
      const auto* batch = st.loader->next();
      if (!batch) {
        replica.finish_epoch();
        self->send(setup.accumulator, finished_atom_v, setup.worker, st.epoch);
        self->send(setup.supervisor, epoch_report{setup.worker, st.epoch, st.loss_sum,
                                                  st.batches, st.samples, replica.iteration()});
        return;
      }
      const float loss = replica.compute_update(batch->features, batch->labels, batch->size);
      auto& buffer = free_buffer(st, replica.update().size());
      replica.swap_update(*buffer);
      self->send(setup.accumulator,
                 worker_update{setup.worker, replica.iteration(), st.epoch, buffer});
      st.loss_sum += loss;
      ++st.batches;
      st.samples += batch->size;
      self->send(setup.supervisor, step_report{setup.worker, st.epoch, loss, batch->size});
      // Queued behind any frames that arrived during this step: they are applied first.
      self->send(self, step_atom_v);
    },
    [self, setup](const shared_frame& incoming) {
      auto& st = self->state;
      auto view = compute::read_update_frame(incoming.value, st.workspace);
      auto applied = view ? compute::apply_update_frame(incoming.value,
                                                        setup.replica->net().parameters(),
                                                        st.workspace)
                          : view.err();
      if (!applied) {
        ++st.frames_rejected;
        log::warning("trainer {}: dropped a frame: {}", setup.worker, applied.err().message);
        return;
      }
      ++st.updates_applied;
      const auto& header = view->header;
      if (!st.applied.insert(header.origin_node, header.sequence)) {
        ++st.duplicate_updates_applied;
        return;
      }
      auto* from = find_origin(st, header.origin_node);
      if (!from) {
        log::warning("trainer {}: frame from origin {}, which is not in the setup", setup.worker,
                     header.origin_node);
        return;
      }
      // Frames of an epoch all arrive before that origin's drain marker, and the next epoch
      // starts only after every drain: a newer epoch restarts the clock.
      if (from->clock_epoch != header.epoch) {
        from->clock_epoch = header.epoch;
        from->clock = 0;
      }
      from->clock = std::max(from->clock, header.iteration);
      resume_if_allowed(self, setup);
    },
    [self, setup](const drain_marker& marker) {
      auto& st = self->state;
      auto* from = find_origin(st, marker.origin);
      if (!from) {
        log::warning("trainer {}: drain marker from origin {}, which is not in the setup",
                     setup.worker, marker.origin);
        return;
      }
      if (from->drained > marker.epoch)
        return;  // seen before
      from->drained = marker.epoch + 1;
      resume_if_allowed(self, setup);
      const bool all_drained =
        std::all_of(st.origins.begin(), st.origins.end(),
                    [&](const origin_progress& entry) { return entry.drained > marker.epoch; });
      if (all_drained)
        self->send(setup.supervisor,
                   drain_report{setup.worker, marker.epoch, st.updates_applied,
                                st.duplicate_updates_applied, st.frames_rejected});
    },
  };
}

} // namespace strom::actors
