// Fuzz target: the checkpoint reader on a file's bytes (parse_checkpoint, as load_checkpoint
// calls it after reading the file into word-aligned memory; a trailing part word is dropped,
// as load_checkpoint refuses such sizes before parsing). A mutated file must fail its section checksums
// or its structure checks, never crash. restore_checkpoint is not run: it needs a model built
// from the job, and a mutated job may ask for any size of model.

#include <capnp/common.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strom/runtime/job/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::size_t whole_words = size / sizeof(capnp::word);
  if (whole_words == 0)
    return 0;
  auto words = kj::heapArray<capnp::word>(whole_words);
  std::memcpy(words.begin(), data, whole_words * sizeof(capnp::word));
  (void)strom::runtime::parse_checkpoint("fuzz.ckpt", words);
  return 0;
}
