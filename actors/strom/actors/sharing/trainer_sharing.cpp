// The trainer in gradient-sharing mode (trainer.hpp): each step's update is threshold-encoded
// against the worker's residual and goes out as a frame; by default the worker applies it to
// its own replica in full in the encoder's pass.

#include <optional>
#include <span>

#include "strom/actors/worker/trainer_steps.hpp"
#include "strom/compute/codecs/sent_elements.hpp"
#include "strom/log.hpp"

namespace strom::actors::trainer_steps {

namespace {

sharing_worker_state& sharing_of(trainer_state& st) {
  return std::get<sharing_worker_state>(st.mode);
}

/// Hands the encoder's per-tensor figures to the node's framer (tensor_sharing.hpp).
void publish_tensors(trainer_state& st, const trainer_setup& setup) {
  auto& sharing = sharing_of(st);
  describe_tensors(st.encoder->figures(), sharing.tensors, sharing.tensor_figures);
  setup.framer->note_tensors(setup.worker, sharing.tensor_figures);
}

/// This step's update as the change to add (its negation), encoded against the worker's
/// residual and framed by the node; a header-only frame when nothing reached the threshold.
/// The updater computes the update in the encoder's pass over the residual, and a worker that
/// applies its own update at once applies it to its replica in that pass too. `sent` gets the
/// encoded update (for momentum masking after the frame is out).
framed_update frame_update(trainer_state& st, const trainer_setup& setup,
                           compute::replica& replica,
                           std::optional<compute::encoded_update>& sent, step_spans& spans) {
  const auto parameters = replica.net().parameters();
  const auto threshold = st.encoder->threshold();
  sent = st.encoder->encode_with(
    [&replica](const compute::threshold_scan_args& scan) { return replica.scan_update(scan); },
    -st.update_scale, setup.apply_own_update ? parameters : std::span<float>{});
  spans.mark(timeline_kind::encode);
  publish_tensors(st, setup);
  return frame_own(st, setup, sent ? *sent : empty_update(parameters.size(), threshold));
}

} // namespace

void start_sharing(self_ptr self, const trainer_setup& setup) {
  sharing_of(self->state).tensors = compute::model_tensors(setup.replica->net());
}

void sharing_step(self_ptr self, const trainer_setup& setup, const compute::batch& batch,
                  step_spans& spans) {
  auto& st = self->state;
  auto& replica = *setup.replica;
  const float loss = compute_step(self, setup, [&] {
    return replica.compute_gradients(batch.features, batch.labels, batch.size);
  });
  spans.mark(timeline_kind::forward_backward);
  std::optional<compute::encoded_update> sent;
  auto own = frame_update(st, setup, replica, sent, spans);
  const shared_frame message{std::move(own.frame)};
  send_to_others(self, setup, message);
  spans.mark(timeline_kind::frame);
  // Its replica holds the update already, unless it applies itself only through frames.
  if (setup.apply_own_update)
    note_applied(self, setup, own.header);
  else
    take(self, setup, message);
  // Off the critical path: the frame is out. The payload stays valid until the next encode.
  if (const auto momentum = replica.momentum();
      sent && setup.momentum_masking && !momentum.empty())
    compute::clear_sent_elements(*sent, momentum);
  count_step(self, setup, loss, batch.size);
}

void warn_if_drifting(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  auto* sharing = std::get_if<sharing_worker_state>(&st.mode);
  if (!sharing || sharing->drift_warned || !st.encoder || sharing->tensor_figures.empty())
    return;
  st.encoder->measure_residual();
  publish_tensors(st, setup);
  const double lag = lag_steps(sharing->tensor_figures);
  log::debug("node {} worker {}: unsent updates hold {:.1f} steps", setup.framer->node_id(),
            setup.worker, lag);
  if (lag <= max_lag_steps)
    return;
  sharing->drift_warned = true;
  log::warning("node {} worker {}: the updates it has not sent yet hold {:.0f} of its steps "
              "(more than {:.0f}): the replicas drift apart; send more a step "
              "(distributed.sharing.threshold.calibrated.density)",
              setup.framer->node_id(), setup.worker, lag, max_lag_steps);
}

} // namespace strom::actors::trainer_steps
