// Fuzz target: the IDX readers on a file's bytes as stored (plain or gzip), as images and as
// labels. Aborts when an accepted file's floats or labels disagree with its header's count.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "strom/compute/data/idx_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strom::compute;
  const std::vector<std::uint8_t> file(data, data + size);
  if (auto images = parse_idx_images("fuzz.idx", file); images.ok()) {
    if (images->features.size() != images->count * images->sample_shape.size())
      std::abort();  // accepted images whose floats do not match their count and shape
  }
  if (auto labels = parse_idx_labels("fuzz.idx", file); labels.ok()) {
    for (const auto label : *labels)
      if (label < 0 || static_cast<std::size_t>(label) >= max_classes)
        std::abort();  // accepted a label outside the class range
  }
  return 0;
}
