#pragma once
// The two pieces of JSON that strom's reports write by hand: strings and numbers. Reports are
// flat objects of known keys, so a JSON library would bring nothing else.

#include <string>

namespace strom::runtime {

/// `text` as a JSON string literal, quoted and escaped.
std::string json_string(const std::string& text);

/// `value` as a JSON number; JSON has no NaN or infinity, so those are null.
std::string json_number(double value);

} // namespace strom::runtime
