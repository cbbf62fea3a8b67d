#pragma once
// How much memory this machine can still give a job, read where Linux keeps it: MemAvailable
// in /proc/meminfo, lowered to a cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes,
// minus what the cgroup already uses) when the process runs in a container. The job's needs
// come from compute/memory_estimate.hpp; this side only reads the machine.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::runtime {

/// The environment variable that replaces the machine's figure (bytes), e.g. for tests that
/// need the same answer on every machine, or to keep room for other programs.
inline constexpr const char* memory_limit_variable = "STROM_MEMORY_LIMIT_BYTES";

/// Bytes available and where the figure came from ("MemAvailable in /proc/meminfo").
struct available_memory {
  std::uint64_t bytes = 0;
  std::string source;
};

/// The memory this process may still allocate; nullopt when nothing says (not Linux).
/// Fails only on a malformed STROM_MEMORY_LIMIT_BYTES.
result<std::optional<available_memory>> read_available_memory();

/// MemAvailable of /proc/meminfo's text, in bytes.
std::optional<std::uint64_t> mem_available_bytes(std::string_view meminfo);

/// Refuses `job` when its `workers` replicas on this machine need more memory than there is;
/// the message says what the model needs, part by part, and what the machine has.
/// `shares_updates`: the job has more than one worker in all.
result<void> check_job_memory(const job_spec& job, std::uint32_t workers, bool shares_updates);

} // namespace strom::runtime
