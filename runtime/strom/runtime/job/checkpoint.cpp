#include "strom/runtime/job/checkpoint.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fmt/format.h>
#include <kj/exception.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "strom/compute/snapshots/float_lists.hpp"
#include "strom/runtime/job/atomic_file.hpp"
#include "strom/schema/checkpoint.capnp.h"

namespace strom::runtime {

namespace {

/// Bumped whenever the meaning of a field changes. 2: section checksums; 3: the run's shape
/// (version 2 files are still read, without it).
constexpr std::uint32_t checkpoint_format_version = 3;
constexpr std::uint32_t oldest_readable_version = 2;
/// Nesting depth of Checkpoint -> Job -> Network -> Layer -> ... is below 10.
constexpr int checkpoint_nesting_limit = 32;

/// CRC-32 of a struct's canonical Cap'n Proto encoding: the same bytes for the same content,
/// whatever message it sits in.
template <class Reader>
std::uint32_t canonical_crc32(Reader reader) {
  const auto words = capnp::canonicalize(reader);
  return compute::crc32_of(0, words.asBytes().begin(), words.asBytes().size());
}

/// Writes `values` into the list `init` makes; returns their CRC-32.
std::uint32_t write_chunks(capnp::List<capnp::Data>::Builder (*init)(schema::Checkpoint::Builder&,
                                                                       unsigned),
                           schema::Checkpoint::Builder& ckpt, std::span<const float> values) {
  return compute::write_float_list(init(ckpt, compute::float_list_pieces(values.size())), values);
}

/// Refuses a section whose content does not match the checksum stored for it.
result<void> check_section(const std::string& path, std::string_view section,
                           std::uint32_t stored, std::uint32_t computed) {
  if (stored == computed)
    return success();
  return error{fmt::format("{}: checkpoint {} section checksum mismatch (CRC-32 stored 0x{:08x}, "
                           "computed 0x{:08x}): the file is damaged",
                           path, section, stored, computed)};
}

/// Refuses the first NaN or infinite value of a checkpoint section, named by its flat index
/// and by the layer it belongs to. The section repeats the layers' layout every `period`
/// values (updater state holds one block per moment); offset and count pick a layer's part.
result<void> check_finite(std::span<const float> values, std::string_view section,
                          const compute::model& net, std::size_t period,
                          std::size_t compute::layer_slice::*offset,
                          std::size_t compute::layer_slice::*count) {
  const auto bad = std::find_if(values.begin(), values.end(),
                                [](float v) { return !std::isfinite(v); });
  if (bad == values.end())
    return success();
  const auto index = static_cast<std::size_t>(bad - values.begin());
  std::string where;
  const std::size_t within = period == 0 ? index : index % period;
  const auto slices = net.slices();
  for (std::size_t l = 0; l < slices.size(); ++l) {
    const auto& slice = slices[l];
    if (within >= slice.*offset && within < slice.*offset + slice.*count)
      where = fmt::format(" (layer {}, {}: its element {} of {})", l,
                          net.layers()[l]->kind(), within - slice.*offset, slice.*count);
  }
  return error{fmt::format("checkpoint {} element {} is {}{}: refusing non-finite values",
                           section, index, *bad, where)};
}

result<void> check_size(std::span<const float> from, std::size_t needed, std::string_view what) {
  if (from.size() != needed)
    return error{fmt::format("checkpoint {} has {} floats, but the model needs {}", what,
                             from.size(), needed)};
  return success();
}

} // namespace

result<void> save_checkpoint(const std::string& path, const job_spec& job,
                             const compute::replica& trained, const checkpoint_progress& progress) {
  capnp::MallocMessageBuilder message;
  auto ckpt = message.initRoot<schema::Checkpoint>();
  ckpt.setFormatVersion(checkpoint_format_version);
  ckpt.setJob(job.reader());
  auto checksums = ckpt.initChecksums();
  checksums.setParameters(write_chunks([](auto& c, unsigned n) { return c.initParameters(n); },
                                       ckpt, trained.net().parameters()));
  checksums.setUpdaterState(write_chunks(
    [](auto& c, unsigned n) { return c.initUpdaterState(n); }, ckpt, trained.updater_state()));
  checksums.setLayerState(write_chunks([](auto& c, unsigned n) { return c.initLayerState(n); },
                                       ckpt, trained.net().state()));
  auto p = ckpt.initProgress();
  p.setEpoch(progress.epoch);
  p.setIteration(progress.iteration);
  p.setSamplesSeen(progress.samples_seen);
  p.setTestAccuracy(progress.test_accuracy);
  p.setTestLoss(progress.test_loss);
  auto run = ckpt.initRun();
  run.setWorkers(progress.workers);
  run.setNodes(progress.nodes);
  run.setServers(progress.servers);
  checksums.setJob(canonical_crc32(ckpt.getJob().asReader()));
  checksums.setProgress(canonical_crc32(p.asReader()));
  checksums.setRun(canonical_crc32(run.asReader()));

  auto words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  return write_file_atomically(
    path, {reinterpret_cast<const std::byte*>(bytes.begin()), bytes.size()}, "checkpoint");
}

result<checkpoint_contents> load_checkpoint(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return error{fmt::format("{}: cannot read checkpoint: {}", path, ec.message())};
  if (size == 0 || size % sizeof(capnp::word) != 0)
    return error{fmt::format("{}: {} bytes is not a whole number of 8-byte words: truncated or not a "
                             "checkpoint", path, size)};
  // Word-aligned storage: FlatArrayMessageReader refuses unaligned input.
  auto words = kj::heapArray<capnp::word>(size / sizeof(capnp::word));
  {
    std::ifstream in{path, std::ios::binary};
    if (!in.read(reinterpret_cast<char*>(words.begin()), static_cast<std::streamsize>(size)))
      return error{fmt::format("{}: cannot read checkpoint: {}", path, std::strerror(errno))};
  }
  return parse_checkpoint(path, words);
}

result<checkpoint_contents> parse_checkpoint(const std::string& path,
                                             kj::ArrayPtr<const capnp::word> words) {
  // The segment table at the front says how long the message is: a file that ends before
  // that was cut short, bytes after it were appended (or it is not one checkpoint).
  const auto expected = capnp::expectedSizeInWordsFromPrefix(words);
  if (expected > words.size())
    return error{fmt::format("{}: truncated: {} bytes, but the checkpoint's segment table needs "
                             "at least {}",
                             path, words.size() * sizeof(capnp::word),
                             expected * sizeof(capnp::word))};
  if (expected < words.size())
    return error{fmt::format("{}: {} bytes follow the checkpoint's end (at byte {}): bytes were "
                             "appended, or the file is not one checkpoint",
                             path, (words.size() - expected) * sizeof(capnp::word),
                             expected * sizeof(capnp::word))};
  std::optional<checkpoint_contents> contents;
  std::optional<error> problem;
  auto failure = kj::runCatchingExceptions([&] {
    capnp::ReaderOptions options;
    // The checksums read the job and the progress a second time (canonicalize).
    options.traversalLimitInWords = 2 * words.size() + 1;
    options.nestingLimit = checkpoint_nesting_limit;
    capnp::FlatArrayMessageReader reader{words, options};
    auto ckpt = reader.getRoot<schema::Checkpoint>();
    const auto version = ckpt.getFormatVersion();
    if (version < oldest_readable_version || version > checkpoint_format_version) {
      problem = error{fmt::format("{}: checkpoint format version {} is not one this strom reads "
                                  "({} to {}; version 1 files carry no checksums and cannot be "
                                  "checked: train again to write a new one)",
                                  path, version, oldest_readable_version,
                                  checkpoint_format_version)};
      return;
    }
    if (!ckpt.hasChecksums()) {
      problem = error{fmt::format("{}: checkpoint has no section checksums", path)};
      return;
    }
    const std::string where = path + ": checkpoint";
    auto parameters = compute::read_float_list(ckpt.getParameters(), "parameters", where);
    auto updater_state = compute::read_float_list(ckpt.getUpdaterState(), "updaterState", where);
    auto layer_state = compute::read_float_list(ckpt.getLayerState(), "layerState", where);
    for (auto* r : {&parameters, &updater_state, &layer_state}) {
      if (!r->ok()) {
        problem = r->err();
        return;
      }
    }
    const auto stored = ckpt.getChecksums();
    auto p = ckpt.getProgress();
    for (auto check : {check_section(path, "job", stored.getJob(), canonical_crc32(ckpt.getJob())),
                       check_section(path, "parameters", stored.getParameters(), parameters->crc),
                       check_section(path, "updater state", stored.getUpdaterState(),
                                     updater_state->crc),
                       check_section(path, "layer state", stored.getLayerState(), layer_state->crc),
                       check_section(path, "progress", stored.getProgress(), canonical_crc32(p)),
                       version < 3 ? success()
                                   : check_section(path, "run", stored.getRun(),
                                                   canonical_crc32(ckpt.getRun()))}) {
      if (!check.ok()) {
        problem = check.err();
        return;
      }
    }
    contents.emplace(checkpoint_contents{
      job_spec{ckpt.getJob(), path}, std::move(parameters->values),
      std::move(updater_state->values), std::move(layer_state->values),
      checkpoint_progress{p.getEpoch(), p.getIteration(), p.getSamplesSeen(), p.getTestAccuracy(),
                          p.getTestLoss(), ckpt.getRun().getWorkers(), ckpt.getRun().getNodes(),
                          ckpt.getRun().getServers()}});
  });
  KJ_IF_MAYBE (e, failure)
    return error{fmt::format("{}: corrupt checkpoint: {}", path, e->getDescription().cStr())};
  if (problem)
    return *problem;
  return std::move(*contents);
}

result<void> restore_checkpoint(const checkpoint_contents& saved, compute::replica& target) {
  const auto& net = target.net();
  const std::size_t parameter_count = net.parameters().size();
  using slice = compute::layer_slice;
  // Everything is checked before anything is copied: a refused checkpoint leaves the target
  // as it was.
  for (auto check :
       {check_size(saved.parameters, parameter_count, "parameters"),
        check_size(saved.updater_state, target.updater_state().size(), "updater state"),
        check_size(saved.layer_state, net.state().size(), "layer state"),
        check_finite(saved.parameters, "parameters", net, parameter_count,
                     &slice::parameter_offset, &slice::parameter_count),
        check_finite(saved.updater_state, "updater state", net, parameter_count,
                     &slice::parameter_offset, &slice::parameter_count),
        check_finite(saved.layer_state, "layer state", net, net.state().size(),
                     &slice::state_offset, &slice::state_count)}) {
    if (!check.ok())
      return check;
  }
  std::copy(saved.parameters.begin(), saved.parameters.end(), target.net().parameters().begin());
  std::copy(saved.updater_state.begin(), saved.updater_state.end(),
            target.updater_state().begin());
  std::copy(saved.layer_state.begin(), saved.layer_state.end(), target.net().state().begin());
  target.set_progress(saved.progress.iteration, saved.progress.epoch);
  return success();
}

} // namespace strom::runtime
