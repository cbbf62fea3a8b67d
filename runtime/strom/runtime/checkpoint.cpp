#include "strom/runtime/checkpoint.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fmt/format.h>
#include <kj/exception.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "strom/schema/checkpoint.capnp.h"

namespace strom::runtime {

namespace {

/// Bumped whenever the meaning of a field changes.
constexpr std::uint32_t checkpoint_format_version = 1;
/// A Data field holds less than 2^29 bytes; 2^28 keeps chunks well inside that.
constexpr std::size_t chunk_bytes = std::size_t{1} << 28;
/// Nesting depth of Checkpoint -> Job -> Network -> Layer -> ... is below 10.
constexpr int checkpoint_nesting_limit = 32;

void write_chunks(capnp::List<capnp::Data>::Builder (*init)(schema::Checkpoint::Builder&,
                                                              unsigned),
                  schema::Checkpoint::Builder& ckpt, std::span<const float> values) {
  const std::size_t bytes = values.size_bytes();
  const auto chunks = static_cast<unsigned>((bytes + chunk_bytes - 1) / chunk_bytes);
  auto list = init(ckpt, chunks);
  const auto* source = reinterpret_cast<const kj::byte*>(values.data());
  for (unsigned i = 0; i < chunks; ++i) {
    const std::size_t begin = i * chunk_bytes;
    const std::size_t size = std::min(chunk_bytes, bytes - begin);
    list.set(i, kj::arrayPtr(source + begin, size));
  }
}

result<std::vector<float>> read_chunks(capnp::List<capnp::Data>::Reader list,
                                       std::string_view field, const std::string& path) {
  // Each access to a chunk counts against the traversal limit: read the list once.
  std::vector<capnp::Data::Reader> chunks;
  for (auto chunk : list)
    chunks.push_back(chunk);
  std::size_t bytes = 0;
  for (auto chunk : chunks)
    bytes += chunk.size();
  if (bytes % sizeof(float) != 0)
    return error{fmt::format("{}: checkpoint field {} holds {} bytes, not a whole number of floats",
                             path, field, bytes)};
  std::vector<float> values(bytes / sizeof(float));
  auto* out = reinterpret_cast<kj::byte*>(values.data());
  for (auto chunk : chunks) {
    std::memcpy(out, chunk.begin(), chunk.size());
    out += chunk.size();
  }
  return values;
}

result<void> copy_exact(std::span<const float> from, std::span<float> to, std::string_view what) {
  if (from.size() != to.size())
    return error{fmt::format("checkpoint {} has {} floats, but the model needs {}", what,
                             from.size(), to.size())};
  std::copy(from.begin(), from.end(), to.begin());
  return success();
}

} // namespace

result<void> save_checkpoint(const std::string& path, const job_spec& job,
                             const compute::replica& trained, const checkpoint_progress& progress) {
  capnp::MallocMessageBuilder message;
  auto ckpt = message.initRoot<schema::Checkpoint>();
  ckpt.setFormatVersion(checkpoint_format_version);
  ckpt.setJob(job.reader());
  write_chunks([](auto& c, unsigned n) { return c.initParameters(n); }, ckpt,
               trained.net().parameters());
  write_chunks([](auto& c, unsigned n) { return c.initUpdaterState(n); }, ckpt,
               trained.updater_state());
  write_chunks([](auto& c, unsigned n) { return c.initLayerState(n); }, ckpt, trained.net().state());
  auto p = ckpt.initProgress();
  p.setEpoch(progress.epoch);
  p.setIteration(progress.iteration);
  p.setSamplesSeen(progress.samples_seen);
  p.setTestAccuracy(progress.test_accuracy);
  p.setTestLoss(progress.test_loss);

  auto parent = std::filesystem::path{path}.parent_path();
  std::error_code ec;
  if (!parent.empty())
    std::filesystem::create_directories(parent, ec);
  if (ec)
    return error{fmt::format("{}: cannot create folder {}: {}", path, parent.string(), ec.message())};
  const std::string temp = path + ".partial";
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  {
    std::ofstream out{temp, std::ios::binary | std::ios::trunc};
    if (!out)
      return error{fmt::format("{}: cannot write checkpoint: {}", temp, std::strerror(errno))};
    out.write(reinterpret_cast<const char*>(bytes.begin()), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush())
      return error{fmt::format("{}: write failed: {}", temp, std::strerror(errno))};
  }
  std::filesystem::rename(temp, path, ec);
  if (ec)
    return error{fmt::format("{}: cannot move checkpoint into place: {}", path, ec.message())};
  return success();
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
  std::optional<checkpoint_contents> contents;
  std::optional<error> problem;
  auto failure = kj::runCatchingExceptions([&] {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = words.size() + 1;
    options.nestingLimit = checkpoint_nesting_limit;
    capnp::FlatArrayMessageReader reader{words, options};
    auto ckpt = reader.getRoot<schema::Checkpoint>();
    if (ckpt.getFormatVersion() != checkpoint_format_version) {
      problem = error{fmt::format("{}: checkpoint format version {} is not the supported {}", path,
                                  ckpt.getFormatVersion(), checkpoint_format_version)};
      return;
    }
    auto parameters = read_chunks(ckpt.getParameters(), "parameters", path);
    auto updater_state = read_chunks(ckpt.getUpdaterState(), "updaterState", path);
    auto layer_state = read_chunks(ckpt.getLayerState(), "layerState", path);
    for (auto* r : {&parameters, &updater_state, &layer_state}) {
      if (!r->ok()) {
        problem = r->err();
        return;
      }
    }
    auto p = ckpt.getProgress();
    contents.emplace(checkpoint_contents{
      job_spec{ckpt.getJob(), path}, std::move(parameters).value(),
      std::move(updater_state).value(), std::move(layer_state).value(),
      checkpoint_progress{p.getEpoch(), p.getIteration(), p.getSamplesSeen(), p.getTestAccuracy(),
                          p.getTestLoss()}});
  });
  KJ_IF_MAYBE (e, failure)
    return error{fmt::format("{}: corrupt checkpoint: {}", path, e->getDescription().cStr())};
  if (problem)
    return *problem;
  return std::move(*contents);
}

result<void> restore_checkpoint(const checkpoint_contents& saved, compute::replica& target) {
  if (auto ok = copy_exact(saved.parameters, target.net().parameters(), "parameters"); !ok)
    return ok;
  if (auto ok = copy_exact(saved.updater_state, target.updater_state(), "updater state"); !ok)
    return ok;
  if (auto ok = copy_exact(saved.layer_state, target.net().state(), "layer state"); !ok)
    return ok;
  target.set_progress(saved.progress.iteration, saved.progress.epoch);
  return success();
}

} // namespace strom::runtime
