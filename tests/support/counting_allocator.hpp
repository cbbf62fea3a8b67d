#pragma once
// Replaces the global operator new of the one test executable that includes this header
// (include it from exactly one file) so that a test can count what a piece of work
// allocates: how many allocations (a training step must make none) and how many bytes (a
// memory estimate must match the real buffers).

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace strom::testing {

/// What was allocated while counting was on.
struct allocation_count {
  std::size_t allocations = 0;
  std::size_t bytes = 0;  ///< freed ones included
};

inline std::atomic<bool> counting_allocations{false};
inline std::atomic<std::size_t> counted_allocations{0};
inline std::atomic<std::size_t> counted_bytes{0};

/// Runs `work` and returns what it allocated.
allocation_count allocated_during(auto&& work) {
  counted_allocations = 0;
  counted_bytes = 0;
  counting_allocations = true;
  work();
  counting_allocations = false;
  return {counted_allocations.load(), counted_bytes.load()};
}

} // namespace strom::testing

void* operator new(std::size_t size) {
  if (strom::testing::counting_allocations.load(std::memory_order_relaxed)) {
    strom::testing::counted_allocations.fetch_add(1, std::memory_order_relaxed);
    strom::testing::counted_bytes.fetch_add(size, std::memory_order_relaxed);
  }
  if (void* p = std::malloc(size == 0 ? 1 : size))
    return p;
  throw std::bad_alloc{};
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
