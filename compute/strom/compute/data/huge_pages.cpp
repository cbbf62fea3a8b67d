#include "strom/compute/data/huge_pages.hpp"

#include <cstdint>

#include <sys/mman.h>

namespace strom::compute {

namespace {

constexpr std::uintptr_t huge_page_bytes = std::uintptr_t{2} << 20;

} // namespace

void prefer_huge_pages(void* data, std::size_t bytes) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const auto first = (begin + huge_page_bytes - 1) & ~(huge_page_bytes - 1);
  const auto last = (begin + bytes) & ~(huge_page_bytes - 1);
  if (data == nullptr || last <= first)
    return;
  // Advice only: a kernel without transparent huge pages refuses, and small pages serve.
  static_cast<void>(::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE));
}

} // namespace strom::compute
