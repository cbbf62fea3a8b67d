#pragma once
// What the sim tests read from `strom sim`'s output: the example folder, whole files, and the
// report's top-level fields as text.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace strom::test {

/// examples/sim/, with the trailing slash.
inline const std::string sim_examples = std::string{STROM_SOURCE_DIR} + "/examples/sim/";

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in{path};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A field of the report's top-level object, as text up to the next comma or brace.
inline std::string report_field(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, key << " missing in the report");
  const auto start = at + key.size() + 3;
  return json.substr(start, json.find_first_of(",}", start) - start);
}

} // namespace strom::test
