#include "strom/runtime/report/report_files.hpp"

#include "strom/runtime/report/html_page.hpp"
#include "strom/runtime/report/report_data.hpp"

namespace strom::runtime {

result<void> write_report_page(const std::string& html_path, const std::string& metrics_text,
                               const std::string& metrics_name,
                               const std::optional<std::string>& timeline_path) {
  report_sources sources{metrics_text, metrics_name, std::nullopt, {}};
  if (timeline_path) {
    auto trace = read_report_input(*timeline_path);
    if (!trace)
      return trace.err();
    sources.trace_text = std::move(*trace);
    sources.trace_name = *timeline_path;
  }
  auto data = read_report_data(sources);
  if (!data)
    return data.err();
  return write_html_report(html_path, *data);
}

} // namespace strom::runtime
