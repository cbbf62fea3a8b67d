// Fuzz target: decode_add with the blocks encoding (input layout in decoder_fuzz.hpp).
#include "decoder_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return strom::fuzz::fuzz_decoder(strom::compute::encoding::blocks, data, size);
}
