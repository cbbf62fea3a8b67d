// Fuzz target: the whole receive path of an update frame. The input is the frame's bytes as
// they would arrive from a peer: frame::from_bytes (fed from an unaligned copy, so the
// aligning copy runs too), read_update_frame, then apply_update_frame into a small model.
// Aborts when a refused frame has touched the model.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "strom/compute/frames/update_frame.hpp"

namespace {

/// Model size the frames are applied to; corpus frames cover at most this many elements.
constexpr std::size_t model_elements = 4096;
constexpr float untouched_marker = 0.25f;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strom::compute;
  // One byte in, so that from_bytes sees misaligned input and must copy it.
  auto shifted = std::make_shared<std::vector<std::byte>>(size + 1);
  if (size != 0)
    std::memcpy(shifted->data() + 1, data, size);
  auto f = frame::from_bytes({shifted->data() + 1, size}, shifted);
  if (!f)
    return 0;
  frame_workspace ws;
  (void)read_update_frame(*f, ws);
  static std::vector<float> model(model_elements);
  std::fill(model.begin(), model.end(), untouched_marker);
  if (!apply_update_frame(*f, model, ws).ok()) {
    for (const float value : model)
      if (value != untouched_marker)
        std::abort();
  }
  return 0;
}
