#pragma once
// A Cap'n Proto message of one schema type read from text, as a job file would hold it: for
// tests of the code that builds things from a job's parts (a Network, a whole Job).

#include <capnp/message.h>
#include <capnp/serialize-text.h>

namespace strom::testing {

/// The message `text` describes, kept alive with its reader.
template <class Schema>
struct spec_from_text {
  capnp::MallocMessageBuilder message;
  typename Schema::Reader reader;
  explicit spec_from_text(const char* text) {
    auto root = message.initRoot<Schema>();
    capnp::TextCodec{}.decode(text, capnp::toDynamic(root));
    reader = root.asReader();
  }
};

} // namespace strom::testing
