#pragma once
// Reading a file written in Cap'n Proto's text format (job files, sim scenarios, calibration
// files) as hostile input: the file is size-checked before it is read, nesting is checked
// before Cap'n Proto's recursive parser sees the text, and every parse error names the file,
// line and column (quoting the line) or, for a misspelled enum value, the field and its
// valid values.

#include <cstddef>
#include <string>
#include <string_view>

#include <capnp/dynamic.h>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// What kind of file is read, for limits and messages.
struct text_file_kind {
  const char* noun;              ///< "job file", "scenario"
  std::size_t max_bytes;         ///< larger files are refused before they are read
  std::size_t max_nesting;       ///< deeper ( [ { nesting is refused before parsing
  std::size_t typical_nesting;   ///< said in the refusal: "a job needs fewer than 10"
};

/// The text of the file at `path`; a file over `kind.max_bytes` is refused before it is read,
/// and a device or pipe is read no further than one byte past the limit.
result<std::string> read_text_file(const std::string& path, const text_file_kind& kind);

/// Decodes `text` into `root`; errors read "SOURCE:LINE:COLUMN: problem" and quote the line.
/// Text with a NUL byte, or nested deeper than `kind.max_nesting`, is refused before parsing.
result<void> decode_capnp_text(std::string_view text, const std::string& source,
                               const text_file_kind& kind, capnp::DynamicStruct::Builder root);

} // namespace strom::runtime
