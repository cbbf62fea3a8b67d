#pragma once
// The charting library every report page carries inline: uPlot (third_party/uplot, MIT),
// embedded into the binary at build time from the vendored files (runtime/CMakeLists.txt
// generates chart_library.cpp from chart_library.cpp.in), so a page needs no network.

#include <string_view>

namespace strom::runtime {

/// uPlot's minified script.
std::string_view chart_library_script();
/// uPlot's style sheet.
std::string_view chart_library_style();
/// uPlot's licence text, which the page repeats in a comment.
std::string_view chart_library_licence();

} // namespace strom::runtime
