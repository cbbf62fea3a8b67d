// Fuzz target: decode_add with the dense_fp32 encoding (input layout in decoder_fuzz.hpp).
#include "decoder_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return strom::fuzz::fuzz_decoder(strom::compute::encoding::dense_fp32, data, size);
}
