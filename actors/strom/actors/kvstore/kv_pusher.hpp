#pragma once
// A kvstore worker's side of the parameter servers (parameter_shard.hpp): after each step it
// pushes its gradient, one frame a key range, encoded as the job asks (fp32; MXNet's 2-bit
// with the residual kept here; strom's threshold encoding, residual kept here), and takes the
// shards' answers into its replica: the new parameters, or the merged gradient that its own
// updater then applies (no server optimizer). Not an actor: the trainer owns one and sends
// what it builds.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <variant>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/kvstore/kv_modes.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/timing.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/encoders/two_bit_encoder.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/kvstore/key_layout.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors {

/// A key range and the shard that holds it.
struct kv_shard_ref {
  compute::key_range range;
  caf::actor shard;
};

/// What a kvstore worker is set up with; no shards: the job is not in kvstore mode.
struct kv_options {
  std::vector<kv_shard_ref> shards;  ///< every range of the model, in buffer order
  kv_compression compression = kv_compression::none;
  compute::two_bit_encoder_options two_bit;
  compute::threshold_encoder_options threshold;
  bool server_optimizer = true;  ///< answers are parameters; false: merged gradients
  bool joins = false;  ///< dist_sync: a node out of batches joins the round's later steps
  /// A push unanswered this long ends the worker: a dist_sync step waits for the slowest
  /// worker, so this is the job's silence limit rather than a round trip.
  caf::timespan push_timeout = timing{}.silence_limit;
};

/// What a worker's pushes and pulls amounted to.
struct kv_traffic {
  std::uint64_t push_bytes = 0;        ///< frame bytes pushed
  std::uint64_t push_dense_bytes = 0;  ///< what fp32 pushes would have been (4 bytes a value)
  std::uint64_t pull_bytes = 0;        ///< frame bytes of the answers taken
};

/// One worker's encoders and counters.
class kv_pusher {
public:
  /// Encoders for every range of `options` (with a residual each, where the encoding keeps one).
  explicit kv_pusher(const kv_options& options);

  /// The push of range `index` for step `step` of `round`: its slice of `gradients` (the
  /// whole model's, flat; the mean of `weight` workers' gradients), encoded.
  result<kv_push> push(std::size_t index, kv_worker worker, std::uint32_t round,
                       std::uint64_t step, std::span<const float> gradients,
                       std::uint32_t weight = 1);

  /// Takes range `index`'s answer: its values replace that slice of `target` (the
  /// parameters, or the gradients when the worker runs its own updater).
  result<void> take(std::size_t index, const kv_values& answer, std::span<float> target);

  /// Counts an answer taken elsewhere (take_kv_values) as pulled.
  void count_answer(const kv_values& answer) noexcept {
    traffic_.pull_bytes += answer.values.size();
  }

  const kv_traffic& traffic() const noexcept { return traffic_; }
  /// The traffic since the last call, which starts counting anew.
  kv_traffic take_traffic() noexcept { return std::exchange(traffic_, {}); }

private:
  using encoder = std::variant<std::monostate, compute::two_bit_encoder, compute::threshold_encoder>;

  std::vector<compute::key_range> ranges_;
  std::vector<encoder> encoders_;
  compute::frame_workspace workspace_;
  std::vector<float> scratch_;  ///< an answer being decoded
  kv_traffic traffic_;
};

/// Takes the answer `values` of `range`: its values replace that slice of `target` (a model's
/// flat parameters or gradients); nothing changes when it does not fit. `workspace` and
/// `scratch` are the caller's reused buffers.
result<void> take_kv_values(const compute::key_range& range, const compute::frame& values,
                            std::span<float> target, compute::frame_workspace& workspace,
                            std::vector<float>& scratch);

/// Takes a shard's updater state `state` of `range` (the updater's blocks, Adam's m then v,
/// each range.count floats) into the model's flat updater state `target`, whose blocks are
/// each `parameters` floats long; nothing changes when it does not fit, or when either side's
/// updater keeps no state.
result<void> take_kv_state(const compute::key_range& range, const compute::frame& state,
                           std::span<float> target, std::size_t parameters,
                           compute::frame_workspace& workspace, std::vector<float>& scratch);

} // namespace strom::actors
