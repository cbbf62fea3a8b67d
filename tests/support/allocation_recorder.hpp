#pragma once
// Replaces the global operator new of the test program that includes this header (from one
// file only): while `recording` is set, it counts allocations, their bytes and the largest
// size, so a test can pin "allocates nothing", "never allocates what a hostile file claims"
// or "a memory estimate matches the real buffers".

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace strom::test {

/// What operator new saw while recording.
struct allocation_record {
  std::size_t count = 0;    ///< allocations made
  std::size_t largest = 0;  ///< bytes of the largest one
  std::size_t bytes = 0;    ///< bytes of all, freed ones included
};

inline std::atomic<bool> recording{false};
inline std::atomic<std::size_t> allocation_count{0};
inline std::atomic<std::size_t> largest_allocation{0};
inline std::atomic<std::size_t> allocated_bytes{0};

/// Runs `work` and returns the allocations it made.
template <class Work>
allocation_record allocations_during(Work&& work) {
  allocation_count = 0;
  largest_allocation = 0;
  allocated_bytes = 0;
  recording = true;
  work();
  recording = false;
  return {allocation_count.load(), largest_allocation.load(), allocated_bytes.load()};
}

} // namespace strom::test

// These replace the global operators, so new and delete do pair with malloc and free; GCC 12
// cannot see that once they are inlined into a test and warns of a mismatch.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  using namespace strom::test;
  if (recording.load(std::memory_order_relaxed)) {
    allocation_count.fetch_add(1, std::memory_order_relaxed);
    allocated_bytes.fetch_add(size, std::memory_order_relaxed);
    std::size_t seen = largest_allocation.load(std::memory_order_relaxed);
    while (size > seen && !largest_allocation.compare_exchange_weak(seen, size)) {
    }
  }
  if (void* p = std::malloc(size == 0 ? 1 : size))
    return p;
  throw std::bad_alloc{};
}
void* operator new[](std::size_t size) { return ::operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
