#pragma once
// The data's large buffers (tens to hundreds of MB: Fashion-MNIST's training images are 188 MB
// of floats) on transparent huge pages where the kernel gives them on request (its `madvise`
// mode, Debian's default). Touching a fresh buffer faults in every page of it, and on a virtual
// machine each fault is costly: 2 MiB pages instead of 4 KiB ones halved the time a node took
// to load Fashion-MNIST here (1.7 s to 0.85 s), time a restarted worker's restore waits for.

#include <cstddef>
#include <vector>

namespace strom::compute {

/// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with huge pages; a
/// no-op for buffers smaller than that or where the kernel declines.
void prefer_huge_pages(void* data, std::size_t bytes) noexcept;

/// `values` (empty) resized to `count` elements, its storage on huge pages where possible.
template <class T>
void resize_on_huge_pages(std::vector<T>& values, std::size_t count) {
  values.reserve(count);
  prefer_huge_pages(values.data(), count * sizeof(T));
  values.resize(count);
}

} // namespace strom::compute
