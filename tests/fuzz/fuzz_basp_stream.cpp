// Fuzz target: the first bytes a listening port reads. The input is what a peer sends to a
// scheduler's port; basp_stream_check reads it as the link guard does, once whole and once
// in chunks whose sizes come from the input itself. Aborts when the two readings disagree
// (released bytes, refusal, admission), when more bytes are released than were fed, or when
// a refused stream is later accepted.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "strom/runtime/transport/basp_stream_check.hpp"

namespace {

using strom::runtime::basp_limits;
using strom::runtime::basp_sender;
using strom::runtime::basp_stream_check;

/// Small caps, so that the fuzzer reaches them with small inputs.
basp_limits small_limits() {
  basp_limits limits;
  limits.handshake_payload = 512;
  limits.message_payload = 4096;
  return limits;
}

struct reading {
  std::size_t released = 0;
  bool refused = false;
  bool admitted = false;
};

reading read_whole(basp_sender sender, const std::uint8_t* data, std::size_t size) {
  basp_stream_check check{sender, small_limits()};
  auto result = check.feed(data, size);
  return {result.ok() ? *result : 0, !result.ok(), check.admitted()};
}

reading read_in_chunks(basp_sender sender, const std::uint8_t* data, std::size_t size) {
  basp_stream_check check{sender, small_limits()};
  reading seen;
  std::size_t offset = 0;
  std::size_t step = 0;
  while (offset < size) {
    const std::size_t chunk = 1 + data[(step++ * 7) % size] % 37;
    const std::size_t take = chunk < size - offset ? chunk : size - offset;
    auto result = check.feed(data + offset, take);
    offset += take;
    if (!result.ok()) {
      seen.refused = true;
      if (check.feed(data, 1).ok())  // a refused stream stays refused
        std::abort();
      break;
    }
    seen.released += *result;
  }
  seen.admitted = check.admitted();
  return seen;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const auto sender : {basp_sender::client, basp_sender::server}) {
    const auto whole = read_whole(sender, data, size);
    const auto chunked = read_in_chunks(sender, data, size);
    if (whole.released > size || chunked.released > size)
      std::abort();
    if (whole.refused != chunked.refused || whole.admitted != chunked.admitted)
      std::abort();
    if (!whole.refused && whole.released != chunked.released)
      std::abort();
  }
  return 0;
}
