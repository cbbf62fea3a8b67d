#include "strom/compute/snapshots/snapshot_encoding.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fmt/format.h>
#include <kj/exception.h>

#include <optional>

#include "strom/compute/snapshots/float_lists.hpp"
#include "strom/schema/snapshot.capnp.h"

namespace strom::compute {

namespace {

/// Bumped whenever the meaning of a field changes.
constexpr std::uint32_t snapshot_format_version = 1;
/// Snapshot -> List(Data) -> Data and Snapshot -> Progress: three levels. A little slack.
constexpr int snapshot_nesting_limit = 8;
/// Words besides the float buffers: stream header, root, Snapshot, Progress and Sharing
/// structs and list pointers; 512 words is several times what they take.
constexpr std::size_t fixed_snapshot_words = 512;
/// Words per origin clock: a list element of 3 data words, with room to spare.
constexpr std::size_t origin_clock_words = 4;
/// Words a List(Data) piece adds besides its bytes: its pointer and its padding to a word.
constexpr std::size_t piece_overhead_words = 2;

std::size_t float_list_words(std::size_t values) {
  return (values * sizeof(float) + sizeof(capnp::word) - 1) / sizeof(capnp::word) +
         piece_overhead_words * (float_list_pieces(values) + 1);
}

void write_progress(schema::Snapshot::Builder root, const snapshot_progress& progress) {
  auto p = root.initProgress();
  p.setEpoch(progress.epoch);
  p.setIteration(progress.iteration);
  p.setTestAccuracy(-1.0f);  // a snapshot is not evaluated (schema: -1 if not evaluated)
  root.setBatchesInEpoch(progress.batches_in_epoch);
  root.setSamplesInEpoch(progress.samples_in_epoch);
  auto origins = root.initOrigins(static_cast<unsigned>(progress.origins.size()));
  for (unsigned i = 0; i < origins.size(); ++i) {
    const auto& from = progress.origins[i];
    origins[i].setOrigin(from.origin);
    origins[i].setClockEpoch(from.clock_epoch);
    origins[i].setClock(from.clock);
    origins[i].setDrained(from.drained);
  }
}

snapshot_progress read_progress(schema::Snapshot::Reader root) {
  snapshot_progress progress;
  progress.epoch = root.getProgress().getEpoch();
  progress.iteration = root.getProgress().getIteration();
  progress.batches_in_epoch = root.getBatchesInEpoch();
  progress.samples_in_epoch = root.getSamplesInEpoch();
  for (auto o : root.getOrigins())
    progress.origins.push_back({o.getOrigin(), o.getClockEpoch(), o.getClock(), o.getDrained()});
  return progress;
}

} // namespace

kj::Array<capnp::word> encode_snapshot(const replica_snapshot& snapshot) {
  const std::size_t words = fixed_snapshot_words +
                            origin_clock_words * snapshot.progress.origins.size() +
                            float_list_words(snapshot.parameters.size()) +
                            float_list_words(snapshot.updater_state.size()) +
                            float_list_words(snapshot.layer_state.size()) +
                            float_list_words(snapshot.sharing ? snapshot.sharing->residual.size() : 0);
  // One first segment sized for everything: the flat form is then a single segment.
  capnp::MallocMessageBuilder message{static_cast<unsigned>(words),
                                      capnp::AllocationStrategy::FIXED_SIZE};
  auto root = message.initRoot<schema::Snapshot>();
  root.setFormatVersion(snapshot_format_version);
  const auto write = [](capnp::List<capnp::Data>::Builder (schema::Snapshot::Builder::*init)(unsigned),
                        schema::Snapshot::Builder& r, const std::vector<float>& values) {
    write_float_list((r.*init)(float_list_pieces(values.size())), values);
  };
  write(&schema::Snapshot::Builder::initParameters, root, snapshot.parameters);
  write(&schema::Snapshot::Builder::initUpdaterState, root, snapshot.updater_state);
  write(&schema::Snapshot::Builder::initLayerState, root, snapshot.layer_state);
  write_progress(root, snapshot.progress);
  if (snapshot.sharing) {
    auto sharing = root.initSharing();
    const auto& residual = snapshot.sharing->residual;
    write_float_list(sharing.initResidual(float_list_pieces(residual.size())), residual);
    const auto& encoder = snapshot.sharing->encoder;
    sharing.setThreshold(encoder.threshold);
    sharing.setIteration(encoder.iteration);
    sharing.setLastEncoding(static_cast<std::uint8_t>(encoder.last_encoding));
    sharing.setLastDensity(encoder.last_density);
    sharing.setClipped(encoder.clipped);
  }
  return capnp::messageToFlatArray(message);
}

result<replica_snapshot> decode_snapshot(std::span<const capnp::word> words) {
  std::optional<replica_snapshot> decoded;
  std::optional<error> problem;
  const auto fail = [&problem](result<float_list>& r) {
    if (!r.ok())
      problem = r.err();
    return !r.ok();
  };
  auto failure = kj::runCatchingExceptions([&] {
    capnp::ReaderOptions options;
    // Each buffer is read once, but list pointers and small structs count again on every
    // access: twice the message, as the checkpoint reader allows.
    options.traversalLimitInWords = 2 * words.size() + 1;
    options.nestingLimit = snapshot_nesting_limit;
    capnp::FlatArrayMessageReader reader{kj::arrayPtr(words.data(), words.size()), options};
    auto root = reader.getRoot<schema::Snapshot>();
    if (root.getFormatVersion() != snapshot_format_version) {
      problem = error{fmt::format("snapshot format version {} is not the supported {}",
                                  root.getFormatVersion(), snapshot_format_version)};
      return;
    }
    auto parameters = read_float_list(root.getParameters(), "parameters", "snapshot");
    auto updater_state = read_float_list(root.getUpdaterState(), "updaterState", "snapshot");
    auto layer_state = read_float_list(root.getLayerState(), "layerState", "snapshot");
    if (fail(parameters) || fail(updater_state) || fail(layer_state))
      return;
    replica_snapshot out;
    out.parameters = std::move(parameters->values);
    out.updater_state = std::move(updater_state->values);
    out.layer_state = std::move(layer_state->values);
    out.progress = read_progress(root);
    if (root.hasSharing()) {
      auto sharing = root.getSharing();
      auto residual = read_float_list(sharing.getResidual(), "sharing.residual", "snapshot");
      if (fail(residual))
        return;
      if (sharing.getLastEncoding() > static_cast<std::uint8_t>(last_encoding)) {
        problem = error{fmt::format("snapshot field sharing.lastEncoding is {}, not an encoding",
                                    sharing.getLastEncoding())};
        return;
      }
      out.sharing = sharing_snapshot{
        std::move(residual->values),
        {sharing.getThreshold(), sharing.getIteration(),
         static_cast<encoding>(sharing.getLastEncoding()), sharing.getLastDensity(),
         sharing.getClipped()}};
    }
    decoded = std::move(out);
  });
  KJ_IF_MAYBE (e, failure)
    return error{fmt::format("corrupt snapshot: {}", e->getDescription().cStr())};
  if (problem)
    return *problem;
  return std::move(*decoded);
}

std::size_t snapshot_bytes_bound(const replica& receiver, std::size_t origins) {
  const std::size_t parameters = receiver.net().parameters().size();
  const std::size_t words = fixed_snapshot_words + origin_clock_words * origins +
                            float_list_words(parameters) +
                            float_list_words(receiver.updater_state().size()) +
                            float_list_words(receiver.net().state().size()) +
                            float_list_words(parameters);  // the sharing residual
  return words * sizeof(capnp::word);
}

} // namespace strom::compute
