#include "strom/runtime/observability/dashboard_page.hpp"

#include <fmt/format.h>

#include "strom/runtime/report/chart_library.hpp"
#include "strom/runtime/report/html_page.hpp"

namespace strom::runtime {

namespace {

/// Milliseconds between two fetches of /status.json (the body's data-poll-ms).
constexpr int poll_milliseconds = 1000;

/// Renders a status (live_cluster::json) into the page's tables and charts, then keeps
/// fetching the next one. A chart is made at a job's first point and only fed afterwards.
constexpr const char* page_script = R"js(
(function () {
  "use strict";
  var charts = {};
  var pollMs = Number(document.body.getAttribute("data-poll-ms"));
  function number(x, digits) {
    return x === null || x === undefined ? "-" : Number(x).toFixed(digits);
  }
  function fill(id, rows) {
    var body = document.getElementById(id);
    body.textContent = "";
    rows.forEach(function (cells) {
      var tr = document.createElement("tr");
      cells.forEach(function (text) {
        var td = document.createElement("td");
        td.textContent = text;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }
  /// "mesh, fanout 2: 1 > 2 3; 2 > 4" as one line a parent.
  function tree(topology) {
    if (!topology) return "plain: every node through the scheduler's hub";
    var at = topology.indexOf(":");
    if (at < 0) return topology;
    return topology.slice(0, at) + "\n" + topology.slice(at + 1).split(";").map(function (p) {
      return "  " + p.trim();
    }).join("\n");
  }
  function chart(key, holder, title, xLabel, yLabel, points, colour) {
    var data = [points.map(function (p) { return p[0]; }),
                points.map(function (p) { return p[1]; })];
    if (charts[key]) {
      charts[key].setData(data);
      return;
    }
    if (points.length === 0) return;
    var width = Math.max(320, Math.floor((holder.parentNode.clientWidth - 24) / 2));
    charts[key] = new uPlot({
      title: title, width: width, height: 260, scales: { x: { time: false } },
      axes: [{ label: xLabel }, { label: yLabel, size: 60 }],
      series: [{ label: xLabel }, { label: yLabel, stroke: colour, width: 2,
                                    points: { show: points.length < 30 } }]
    }, data, holder);
  }
  function job_section(job) {
    var id = "job-" + job.id;
    var section = document.getElementById(id);
    if (section) return section;
    section = document.createElement("section");
    section.id = id;
    var title = document.createElement("h2");
    title.textContent = "job " + job.id + ": " + job.name;
    section.appendChild(title);
    var topology = document.createElement("pre");
    topology.className = "topology";
    section.appendChild(topology);
    var row = document.createElement("div");
    row.className = "charts";
    ["loss", "accuracy"].forEach(function (kind) {
      var holder = document.createElement("div");
      holder.id = kind + "-" + job.id;
      row.appendChild(holder);
    });
    section.appendChild(row);
    document.getElementById("job-charts").appendChild(section);
    return section;
  }
  function render(status) {
    document.getElementById("scheduler").textContent = status.scheduler
      ? "membership epoch " + status.membership_epoch + ", " + number(status.seconds, 0) +
        " s of records"
      : "the scheduler does not answer";
    var behind = {};
    status.jobs.forEach(function (job) {
      job.lag.forEach(function (lag) { behind[lag.node] = lag.behind; });
    });
    fill("nodes", status.nodes.map(function (n) {
      return [String(n.id), n.name, n.role, String(n.incarnation), String(n.workers),
              number(n.speed, 2), n.rtt === null ? "-" : number(1000 * n.rtt, 1) + " ms",
              n.name in behind ? number(behind[n.name], 1) + " steps" : "-"];
    }));
    fill("jobs", status.jobs.map(function (j) {
      return [String(j.id), j.name, j.state, j.epoch + " / " + j.epochs,
              number(100 * j.epoch / Math.max(j.epochs, 1), 0) + "%", String(j.nodes),
              j.lost + " / " + j.restored + " / " + j.joined, number(j.current_loss, 4),
              j.test_accuracy === null ? "-" : number(100 * j.test_accuracy, 2) + "%",
              j.stall || j.failure || ""];
    }));
    status.jobs.forEach(function (job) {
      var section = job_section(job);
      section.querySelector("pre.topology").textContent = tree(job.topology);
      chart("loss-" + job.id, document.getElementById("loss-" + job.id), "training loss",
            "seconds", "loss", job.loss, "#1f77b4");
      chart("accuracy-" + job.id, document.getElementById("accuracy-" + job.id),
            "test accuracy", "epoch", "accuracy",
            job.accuracy.map(function (p) { return [p[0], 100 * p[1]]; }), "#2ca02c");
    });
    document.body.setAttribute("data-nodes-shown", String(status.nodes.length));
  }
  function poll() {
    fetch("status.json", { cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(render)
      .catch(function () {
        document.getElementById("scheduler").textContent = "the scheduler's page does not answer";
      })
      .then(function () { setTimeout(poll, pollMs); });
  }
  try {
    render(JSON.parse(document.getElementById("strom-status").textContent));
  } catch (e) {
    document.body.setAttribute("data-page-error", String(e && e.message ? e.message : e));
  }
  setTimeout(poll, pollMs);
})();
)js";

/// Inline scripts and styles, and fetches of its own status; nothing else.
constexpr const char* content_policy = "default-src 'none'; script-src 'unsafe-inline'; "
                                       "style-src 'unsafe-inline'; connect-src 'self'";

constexpr const char* page_style = R"css(
body { font-family: sans-serif; margin: 16px 24px; color: #222; }
table { border-collapse: collapse; margin-bottom: 16px; width: 100%; }
th, td { text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid #ddd; }
th { color: #555; font-weight: normal; }
div.charts { display: flex; flex-wrap: wrap; gap: 24px; }
pre.topology { color: #444; margin: 4px 0 8px 0; }
#scheduler { color: #666; }
)css";

constexpr const char* page_body = R"html(
<h1>strom cluster</h1>
<p id="scheduler"></p>
<h2>Nodes</h2>
<table><thead><tr><th>id</th><th>name</th><th>role</th><th>incarnation</th><th>workers</th>
<th>speed</th><th>heartbeat</th><th>lag</th></tr></thead><tbody id="nodes"></tbody></table>
<h2>Jobs</h2>
<table><thead><tr><th>id</th><th>name</th><th>state</th><th>epochs</th><th>progress</th>
<th>nodes</th><th>lost / restored / joined</th><th>loss</th><th>test accuracy</th>
<th>stall or failure</th></tr></thead><tbody id="jobs"></tbody></table>
<div id="job-charts"></div>
)html";

} // namespace

std::string render_dashboard(const std::string& status) {
  return fmt::format(
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n"
    "<title>strom cluster</title>\n<style>\n{}\n{}</style>\n</head>\n"
    "<body data-poll-ms=\"{}\">\n{}"
    "<script>\n/*! uPlot, vendored from npm (third_party/uplot). Its licence:\n{}*/\n{}\n"
    "</script>\n<script type=\"application/json\" id=\"strom-status\">{}</script>\n"
    "<script>{}</script>\n</body>\n</html>\n",
    content_policy, chart_library_style(), page_style, poll_milliseconds, page_body,
    chart_library_licence(), chart_library_script(), script_safe_json(status), page_script);
}

} // namespace strom::runtime
