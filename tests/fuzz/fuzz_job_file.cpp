// Fuzz target: the job-file reader. The input is a job file's text as `strom train` and
// `strom submit` would read it: parse_job_text (NUL and nesting checks, then Cap'n Proto's
// text parser), check_job (every field's range), then the memory estimate. Aborts when the
// reader's parts disagree: a checked job that cannot be estimated, one whose text does not
// parse back, or a small one that make_replica refuses or throws on.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "strom/compute/memory_estimate.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace {

/// Jobs up to this estimate are built for real, to hold check_job to make_replica's word;
/// larger ones would make the fuzzer slow (initialising parameters), not find more.
constexpr std::uint64_t max_built_bytes = 4u << 20;

/// Workers the estimate counts: several, with sharing, so every part is exercised.
constexpr std::uint32_t estimated_workers = 4;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strom;
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  auto job = runtime::parse_job_text(text, "fuzz.job", "/data");
  if (!job)
    return 0;
  if (!runtime::check_job(*job))
    return 0;
  auto estimate = compute::estimate_memory(job->reader(), {estimated_workers, true});
  if (!estimate)
    std::abort();
  if (!runtime::parse_job_text(runtime::to_text(*job), "fuzz.job", "/data"))
    std::abort();
  if (estimate->total() <= max_built_bytes) {
    try {
      if (!compute::make_replica(job->reader(), 0))
        std::abort();
    } catch (...) {
      std::abort();
    }
  }
  return 0;
}
