#include "strom/runtime/job/state_dir.hpp"

#include <cstring>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <fmt/format.h>

#include "strom/compute/data/file_contents.hpp"
#include "strom/compute/snapshots/float_lists.hpp"
#include "strom/runtime/job/atomic_file.hpp"

namespace strom::runtime {

namespace {

/// A sealed file's header: magic, format version, CRC-32 and length of the payload.
struct seal_header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t crc;
  std::uint64_t payload_bytes;
};
static_assert(sizeof(seal_header) == 24, "the header keeps the payload 8-byte aligned");

/// Bumped whenever what a sealed file holds changes its layout, so that a state directory of
/// another strom version is refused by its version, not misread. 2: job submissions carry
/// keep_checkpoints. 3: max_restarts and job_restarts.
constexpr std::uint32_t seal_version = 3;
constexpr char record_magic[8] = {'S', 'T', 'R', 'O', 'M', 'S', 'C', 'H'};
constexpr char checkpoint_magic[8] = {'S', 'T', 'R', 'O', 'M', 'C', 'K', 'P'};

/// A record is membership counters, job texts and reports: far below this. A larger file is
/// not one of ours.
constexpr std::uint64_t max_record_bytes = std::uint64_t{64} << 20;

const char* const record_file = "scheduler.state";

/// `payload` behind a header with `magic`.
std::vector<std::byte> sealed(const char (&magic)[8], std::span<const std::byte> payload) {
  seal_header header{};
  std::memcpy(header.magic, magic, sizeof header.magic);
  header.version = seal_version;
  header.crc = compute::crc32_of(0, payload.data(), payload.size());
  header.payload_bytes = payload.size();
  std::vector<std::byte> bytes(sizeof header + payload.size());
  std::memcpy(bytes.data(), &header, sizeof header);
  std::memcpy(bytes.data() + sizeof header, payload.data(), payload.size());
  return bytes;
}

/// The payload of the sealed file `path` read into `bytes`, checked against its header.
result<std::span<const std::byte>> unsealed(const std::string& path,
                                            const std::vector<std::uint8_t>& bytes,
                                            const char (&magic)[8], const char* what) {
  seal_header header{};
  if (bytes.size() < sizeof header)
    return error{fmt::format("{}: {} truncated: {} bytes, shorter than its {}-byte header", path,
                             what, bytes.size(), sizeof header)};
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.magic, magic, sizeof header.magic) != 0)
    return error{fmt::format("{}: not a strom {} (wrong magic)", path, what)};
  if (header.version != seal_version)
    return error{fmt::format("{}: {} format version {}, this strom reads {}", path, what,
                             header.version, seal_version)};
  if (header.payload_bytes != bytes.size() - sizeof header)
    return error{fmt::format("{}: {} truncated or extended: the header says {} bytes follow, {} do",
                             path, what, header.payload_bytes, bytes.size() - sizeof header)};
  const std::span<const std::byte> payload{reinterpret_cast<const std::byte*>(bytes.data())
                                             + sizeof header,
                                           static_cast<std::size_t>(header.payload_bytes)};
  if (compute::crc32_of(0, payload.data(), payload.size()) != header.crc)
    return error{fmt::format("{}: {} damaged: its CRC-32 does not match", path, what)};
  return payload;
}

} // namespace

result<std::shared_ptr<state_dir_store>> state_dir_store::open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    return error{fmt::format("--state-dir {}: cannot use it as the scheduler's state directory: {}",
                             dir, ec ? ec.message() : "not a directory")};
  return std::shared_ptr<state_dir_store>{new state_dir_store{dir}};
}

result<std::optional<actors::scheduler_record>> state_dir_store::load() const {
  const auto path = (dir_ / record_file).string();
  if (!std::filesystem::exists(path))
    return std::optional<actors::scheduler_record>{};
  auto bytes = compute::read_file_bytes(path, max_record_bytes + sizeof(seal_header));
  if (!bytes)
    return bytes.err();
  auto payload = unsealed(path, *bytes, record_magic, "scheduler state");
  if (!payload)
    return payload.err();
  actors::scheduler_record record;
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr),
                                  reinterpret_cast<const char*>(payload->data()), payload->size()};
  if (auto err = source(record))
    return error{fmt::format("{}: scheduler state unreadable although its CRC-32 matches "
                             "(written by another strom version?): {}", path, to_string(err))};
  return std::optional<actors::scheduler_record>{std::move(record)};
}

result<void> state_dir_store::save(const actors::scheduler_record& record) {
  std::vector<char> payload;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), payload};
  auto written = record;  // CAF 0.17's inspect takes its object by non-const reference
  if (auto err = sink(written))
    return error{fmt::format("{}: cannot encode the scheduler state: {}",
                             (dir_ / record_file).string(), to_string(err))};
  const auto bytes = sealed(record_magic, std::as_bytes(std::span{payload}));
  return write_file_atomically((dir_ / record_file).string(), bytes, "scheduler state");
}

std::filesystem::path state_dir_store::checkpoint_path(std::uint64_t job_id) const {
  return dir_ / fmt::format("job-{}.checkpoint", job_id);
}

result<void> state_dir_store::save_checkpoint(std::uint64_t job_id, const compute::frame& encoded) {
  return write_file_atomically(checkpoint_path(job_id).string(),
                               sealed(checkpoint_magic, encoded.bytes()), "job checkpoint");
}

result<compute::frame> state_dir_store::load_checkpoint(std::uint64_t job_id) {
  const auto path = checkpoint_path(job_id).string();
  auto bytes = compute::read_file_bytes(path, compute::max_frame_bytes + sizeof(seal_header));
  if (!bytes)
    return bytes.err();
  auto held = std::make_shared<std::vector<std::uint8_t>>(std::move(*bytes));
  auto payload = unsealed(path, *held, checkpoint_magic, "job checkpoint");
  if (!payload)
    return payload.err();
  auto made = compute::frame::from_bytes(*payload, held);
  if (!made)
    return error{fmt::format("{}: job checkpoint: {}", path, made.err().message)};
  return made;
}

void state_dir_store::drop_checkpoint(std::uint64_t job_id) {
  std::error_code ignored;
  std::filesystem::remove(checkpoint_path(job_id), ignored);
}

} // namespace strom::runtime
