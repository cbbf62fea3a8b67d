#include "strom/runtime/report/html_page.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "strom/runtime/job/atomic_file.hpp"
#include "strom/runtime/report/chart_library.hpp"

namespace strom::runtime {

namespace {

/// The page's own script: draws each chart of the data with uPlot as wide as its column, joins
/// a chart's series on one x axis (uPlot.join leaves gaps where a series has no point, spanned
/// by the line), ticks whole numbers only on an axis of whole numbers (epochs) and marks
/// membership changes on time axes. Errors are shown on the page and set data-page-error, so
/// a test sees them in the rendered page as well as on the console.
constexpr const char* page_script = R"js(
(function () {
  "use strict";
  var colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"];
  function fail(message) {
    document.body.setAttribute("data-page-error", message);
    var p = document.createElement("p");
    p.className = "error";
    p.textContent = "report error: " + message;
    document.body.appendChild(p);
  }
  function markerPlugin(markers) {
    return { hooks: { draw: [function (u) {
      var ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = "#d62728";
      ctx.fillStyle = "#d62728";
      ctx.setLineDash([6, 4]);
      ctx.font = (12 * devicePixelRatio) + "px sans-serif";
      markers.forEach(function (m) {
        var x = Math.round(u.valToPos(m.at_seconds, "x", true));
        if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.fillText(m.label, x + 4, u.bbox.top + 14 * devicePixelRatio);
      });
      ctx.restore();
    }] } };
  }
  try {
    var data = JSON.parse(document.getElementById("strom-data").textContent);
    var holder = document.getElementById("charts");
    var drawn = 0;
    data.charts.forEach(function (c) {
      var section = document.createElement("section");
      section.id = "chart-" + c.id;
      holder.appendChild(section);
      var tables = c.series.map(function (s) {
        return [s.points.map(function (p) { return p[0]; }),
                s.points.map(function (p) { return p[1]; })];
      });
      var aligned = tables.length === 1 ? tables[0] : uPlot.join(tables);
      var whole = c.series.every(function (s) {
        return s.points.every(function (p) { return Number.isInteger(p[0]); });
      });
      var xAxis = { label: c.x_label };
      if (whole)
        xAxis.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
      var series = [{ label: c.x_label }].concat(c.series.map(function (s, i) {
        return { label: s.label, stroke: colours[i % colours.length], width: 2,
                 spanGaps: true, points: { show: s.points.length < 30 } };
      }));
      new uPlot({
        title: c.title, width: Math.max(section.clientWidth, 320), height: 300,
        scales: { x: { time: false } },
        axes: [xAxis, { label: c.y_label, size: 70 }],
        series: series,
        plugins: c.time_axis && data.markers.length ? [markerPlugin(data.markers)] : []
      }, aligned, section);
      var source = document.createElement("p");
      source.className = "source";
      source.textContent = "drawn from: " + c.source;
      section.appendChild(source);
      drawn += 1;
    });
    document.body.setAttribute("data-charts-drawn", String(drawn));
  } catch (e) {
    fail(String(e && e.message ? e.message : e));
  }
})();
)js";

/// The page may load nothing: inline scripts and styles only. A request the page tried anyway
/// would be refused and reported on the browser's console (where the rendering test looks).
constexpr const char* content_policy =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'";

/// The page's own style, besides uPlot's.
constexpr const char* page_style = R"css(
body { font-family: sans-serif; margin: 24px; color: #222; }
div.tables { display: flex; flex-wrap: wrap; gap: 8px 48px; align-items: flex-start; }
table.summary { border-collapse: collapse; margin-bottom: 16px; }
table.summary td { padding: 2px 12px 2px 0; }
table.summary td.setting { max-width: 60em; overflow-wrap: anywhere; font-family: monospace; }
#charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr));
          gap: 8px 24px; }
section { margin-bottom: 24px; min-width: 0; }
div.bars { margin-bottom: 16px; }
div.bars table { border-collapse: collapse; }
div.bars td { padding: 1px 8px 1px 0; white-space: nowrap; }
div.bar { background: #1f77b4; height: 14px; }
p.source { color: #666; font-size: 12px; margin: 4px 0 0 0; }
p.error { color: #b00; font-weight: bold; }
)css";

} // namespace

std::string html_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

/// The charts and markers as the JSON the page's script reads.
std::string data_json(const report_data& data) {
  using json = nlohmann::ordered_json;
  auto charts = json::array();
  for (const auto& c : data.charts) {
    auto series = json::array();
    for (const auto& s : c.series) {
      auto points = json::array();
      for (const auto& [x, y] : s.points)
        points.push_back({x, y});
      series.push_back({{"label", s.label}, {"points", std::move(points)}});
    }
    charts.push_back({{"id", c.id},
                      {"title", c.title},
                      {"x_label", c.x_label},
                      {"y_label", c.y_label},
                      {"time_axis", c.time_axis},
                      {"source", c.source},
                      {"series", std::move(series)}});
  }
  auto markers = json::array();
  for (const auto& m : data.markers)
    markers.push_back({{"at_seconds", m.at_seconds}, {"label", m.label}});
  const json page = {{"charts", std::move(charts)}, {"markers", std::move(markers)}};
  return script_safe_json(page.dump());
}

} // namespace

std::string script_safe_json(const std::string& json) {
  std::string escaped;
  for (char c : json)
    escaped += c == '<' ? std::string{"\\u003c"} : std::string(1, c);
  return escaped;
}

namespace {

/// Rows of (name, value) as a summary table; `value_class` styles the values.
std::string table_of(const std::vector<std::pair<std::string, std::string>>& rows,
                     const char* value_class) {
  std::string text = "<table class=\"summary\">\n";
  for (const auto& [name, value] : rows)
    text += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td></tr>\n", html_text(name),
                        value_class, html_text(value));
  return text + "</table>\n";
}

/// Each group of per-node figures as a table of bars, each as long as its share of the
/// group's largest (plain HTML: it needs no script to read).
std::string bars_of(const std::vector<bar_group>& groups) {
  std::string text;
  for (const auto& group : groups) {
    double largest = 0.0;
    for (const auto& [node, value] : group.bars)
      largest = std::max(largest, value);
    text += fmt::format("<div class=\"bars\" id=\"bars-{}\"><h3>{}</h3><table>\n",
                        html_text(group.id), html_text(group.title));
    for (const auto& [node, value] : group.bars)
      text += fmt::format("<tr><td>{}</td><td style=\"width:24em\"><div class=\"bar\" "
                          "style=\"width:{:.1f}%\"></div></td><td>{:.6g} {}</td></tr>\n",
                          html_text(node), largest > 0 ? 100.0 * value / largest : 0.0, value,
                          html_text(group.unit));
    text += "</table></div>\n";
  }
  return text;
}

} // namespace

std::string render_html_report(const report_data& data) {
  const auto title = html_text("strom report: " + (data.job.empty() ? "run" : data.job));
  return fmt::format(
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n<title>{}</title>\n"
    "<style>\n{}\n{}</style>\n</head>\n<body>\n<h1>{}</h1>\n<div class=\"tables\">\n{}{}"
    "</div>\n<div class=\"tables\">\n{}</div>\n<div id=\"charts\"></div>\n"
    "<script>\n/*! uPlot, vendored from npm (third_party/uplot). Its licence:\n{}*/\n{}\n"
    "</script>\n<script type=\"application/json\" id=\"strom-data\">{}</script>\n"
    "<script>{}</script>\n</body>\n</html>\n",
    content_policy, title, chart_library_style(), page_style, title,
    table_of(data.summary, "figure"), table_of(data.settings, "setting"), bars_of(data.bars),
    chart_library_licence(), chart_library_script(), data_json(data), page_script);
}

result<void> write_html_report(const std::string& path, const report_data& data) {
  const auto page = render_html_report(data);
  return write_file_atomically(
    path, {reinterpret_cast<const std::byte*>(page.data()), page.size()}, "HTML report");
}

} // namespace strom::runtime
