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

} // namespace

caf::behavior trainer(caf::stateful_actor<trainer_state>* self, trainer_setup setup) {
  self->set_exception_handler(
    [](caf::scheduled_actor*, std::exception_ptr& failure) { return describe(failure); });
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
      st.loss_sum = 0.0;
      st.batches = 0;
      st.samples = 0;
      self->send(self, step_atom_v);
    },
    [self, setup](step_atom) {
      auto& st = self->state;
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
      const auto update = replica.update();
      auto& buffer = free_buffer(st, update.size());
      std::copy(update.begin(), update.end(), buffer->begin());
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
      if (!st.applied.insert(view->header.origin_node, view->header.sequence))
        ++st.duplicate_updates_applied;
    },
    [self, setup](const drain_marker& marker) {
      const auto& st = self->state;
      self->send(setup.supervisor,
                 drain_report{setup.worker, marker.epoch, st.updates_applied,
                              st.duplicate_updates_applied, st.frames_rejected});
    },
  };
}

} // namespace strom::actors
