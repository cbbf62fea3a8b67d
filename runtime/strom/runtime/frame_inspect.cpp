#include "strom/runtime/frame_inspect.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/frames/frame_file.hpp"
#include "strom/compute/frames/update_frame.hpp"

namespace strom::runtime {

namespace {

using namespace strom::compute;

int refuse(std::FILE* err, const std::string& path, const std::string& problem) {
  fmt::print(err, "strom frame inspect: {}: {}\n", path, problem);
  return 1;
}

} // namespace

int inspect_frame_file(const std::string& path, std::FILE* out, std::FILE* err) {
  // read_frame_file's messages already name the file.
  auto f = read_frame_file(path);
  if (!f) {
    fmt::print(err, "strom frame inspect: {}\n", f.err().message);
    return 1;
  }
  frame_workspace ws;
  auto view = read_update_frame(*f, ws);
  if (!view)
    return refuse(err, path, view.err().message);
  const update_frame_view& v = *view;

  // Values carried: the non-zeros left after decoding into zeros, which also validates the
  // payload exactly as a receiver would.
  std::string values_line;
  if (v.elements <= max_inspect_elements) {
    std::vector<float> scratch(v.elements, 0.0f);
    if (auto decoded = decode_add(v.enc, v.threshold, v.payload, scratch); !decoded)
      return refuse(err, path, decoded.err().message);
    const auto values = static_cast<std::size_t>(
        std::count_if(scratch.begin(), scratch.end(), [](float x) { return x != 0.0f; }));
    const double density = v.elements == 0 ? 0.0 : double(values) / double(v.elements);
    values_line = fmt::format("{} (density {:.6g})", values, density);
  } else {
    values_line = fmt::format("not counted: {} elements exceed the inspect limit of {}",
                              v.elements, max_inspect_elements);
  }

  const double dense_fp32_bytes = 4.0 * double(v.elements);
  fmt::print(out, "frame {}\n", path);
  fmt::print(out, "  origin node      {}\n", v.header.origin_node);
  fmt::print(out, "  worker           {}\n", v.header.worker);
  fmt::print(out, "  sequence         {}\n", v.header.sequence);
  fmt::print(out, "  iteration        {}\n", v.header.iteration);
  fmt::print(out, "  epoch            {}\n", v.header.epoch);
  fmt::print(out, "  encoding         {}\n", to_string(v.enc));
  fmt::print(out, "  threshold        {}\n", v.threshold);
  fmt::print(out, "  offset           {}\n", v.header.offset);
  fmt::print(out, "  elements         {}\n", v.elements);
  fmt::print(out, "  values           {}\n", values_line);
  fmt::print(out, "  compression      {}\n",
             v.compression == frame_compression::lz4 ? "lz4" : "none");
  fmt::print(out, "  payload bytes    {} raw, {} stored\n", v.payload.size(),
             v.stored_payload_bytes);
  fmt::print(out, "  frame bytes      {}\n", f->size());
  fmt::print(out, "  vs dense fp32    {:.4g}x smaller ({} bytes dense)\n",
             dense_fp32_bytes / double(f->size()), static_cast<std::uint64_t>(dense_fp32_bytes));
  return 0;
}

} // namespace strom::runtime
