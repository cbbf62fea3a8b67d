// The HTML report of a real run, rendered by a real browser: `strom train` of a small MLP on
// two in-process nodes for two epochs with --html-out, and `strom submit --html-out` of the
// same job to a scheduler and two node processes; then Debian's headless chromium loads each
// page. Skipped, saying so, where chromium is not installed (.ci/setup.sh installs it).
#define BOOST_TEST_MODULE html_report_render
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "process/cluster_processes.hpp"
#include "support/http_get.hpp"
#include "support/scratch_dir.hpp"
#include "support/small_fashion_job.hpp"
#include "support/strom_program.hpp"

namespace {

/// Where Debian's chromium package puts the browser.
constexpr const char* chromium_path = "/usr/bin/chromium";
/// Charts the page of a 2-node run must draw: loss, accuracy and samples/s at the least.
constexpr int min_charts = 3;
/// Seconds chromium may take to load and render the page (about 2 s on a quiet machine).
constexpr int chromium_timeout_seconds = 60;
/// The charts drawn from the nodes' history: what a page shows beyond the epochs.
const std::vector<std::string> node_chart_ids = {"node_speed", "node_bytes", "threshold",
                                                 "density"};
/// The submit of a 2-epoch small job to two node processes, their start included.
constexpr auto submit_limit = std::chrono::milliseconds(120'000);
/// Hidden units of the small job here: at its default 64 an epoch takes 0.2 s, within one
/// node record (node_record_interval_seconds); at 512 about 1 s, several records a node.
constexpr unsigned hidden_units = 512;

/// The small job in `dir`, sized for per-node series.
std::filesystem::path report_job(const strom::test::scratch& dir) {
  return dir.write("small.job", strom::testing::small_fashion_job_text(
                                  STROM_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz",
                                  hidden_units));
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in{path};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct rendered {
  int status = -1;
  std::string dom;  ///< the page's DOM after its scripts ran
  std::string log;  ///< chromium's stderr, console messages included
};

/// `url` (a file:// page, or an http:// one) as chromium renders it.
rendered render(const strom::test::scratch& dir, const std::string& url) {
  const auto dom = dir.path() / "dom.html";
  const auto log = dir.path() / "chromium.log";
  const auto command = fmt::format(
    "timeout {} {} --headless --no-sandbox --disable-gpu --disable-background-networking "
    "--disable-component-update --disable-sync --no-first-run --disable-extensions "
    "--user-data-dir={} --enable-logging=stderr --v=0 --virtual-time-budget=2000 "
    "--dump-dom {} > {} 2> {}",
    chromium_timeout_seconds, chromium_path, (dir.path() / "profile").string(), url,
    dom.string(), log.string());
  rendered out;
  const int raw = std::system(command.c_str());
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  out.dom = file_text(dom);
  out.log = file_text(log);
  return out;
}

/// Renders `page` in chromium and checks that its script drew at least min_charts charts on
/// canvases, without any console message; returns the rendered DOM.
std::string check_rendered(const strom::test::scratch& dir, const std::filesystem::path& page) {
  const auto shown = render(dir, "file://" + page.string());
  BOOST_REQUIRE_MESSAGE(shown.status == 0, shown.log);
  std::smatch drawn;
  BOOST_REQUIRE_MESSAGE(
    std::regex_search(shown.dom, drawn, std::regex{"data-charts-drawn=\"([0-9]+)\""}),
    "the page's script did not finish:\n" + shown.dom.substr(0, 2000));
  BOOST_TEST(std::stoi(drawn[1]) >= min_charts);
  BOOST_TEST(shown.dom.find("data-page-error=\"") == std::string::npos, shown.dom);
  // uPlot draws each chart on a canvas sized by the chart's options.
  const std::regex canvas{"<canvas[^>]*width=\"([0-9]+)\"[^>]*height=\"([0-9]+)\""};
  int canvases = 0;
  for (auto it = std::sregex_iterator(shown.dom.begin(), shown.dom.end(), canvas);
       it != std::sregex_iterator(); ++it)
    if (std::stoi((*it)[1]) > 0 && std::stoi((*it)[2]) > 0)
      ++canvases;
  BOOST_TEST(canvases >= min_charts);
  // No console message at all: no script error, and no request the page's policy refused.
  BOOST_TEST(shown.log.find("CONSOLE") == std::string::npos, shown.log);
  return shown.dom;
}

/// Whether chromium is there; says that the test is skipped when not.
bool chromium_installed() {
  if (::access(chromium_path, X_OK) == 0)
    return true;
  BOOST_TEST_MESSAGE("skipped: " << chromium_path
                                 << " is not installed (apt-get install chromium)");
  return false;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_report_of_a_two_node_run_renders_its_charts_in_chromium) {
  if (!chromium_installed())
    return;
  strom::test::scratch dir;
  const auto job = report_job(dir);
  const auto page = dir.path() / "report.html";
  const auto trained = strom::test::run_strom(fmt::format(
    "train {} --nodes 2 --workers 1 --epochs 2 --metrics-out {} --timeline {} --html-out {} "
    "--checkpoint-dir {}",
    job.string(), (dir.path() / "m.json").string(), (dir.path() / "t.json").string(),
    page.string(), (dir.path() / "ckpt").string()));
  BOOST_REQUIRE_MESSAGE(trained.status == 0, trained.output);

  const auto dom = check_rendered(dir, page);
  for (const auto& id : node_chart_ids)
    BOOST_TEST(dom.find("id=\"chart-" + id + "\"") != std::string::npos, id);

  // `strom report` draws the same page from the files the run wrote.
  const auto again = dir.path() / "again.html";
  const auto reported = strom::test::run_strom(fmt::format(
    "report {} --timeline {} -o {}", (dir.path() / "m.json").string(),
    (dir.path() / "t.json").string(), again.string()));
  BOOST_REQUIRE_MESSAGE(reported.status == 0, reported.output);
  BOOST_TEST(file_text(again) == file_text(page));
}

BOOST_AUTO_TEST_CASE(the_report_of_a_submitted_job_draws_the_nodes_charts_too) {
  if (!chromium_installed())
    return;
  strom::test::local_cluster cluster{2};
  const auto& dir = cluster.dir();
  const auto job = report_job(dir);
  const auto page = dir.path() / "report.html";
  const auto metrics = dir.path() / "m.json";
  const auto submitted = cluster.command({"submit", job.string(), "--epochs", "2",
                                          "--metrics-out", metrics.string(), "--html-out",
                                          page.string()},
                                         "submit", submit_limit);
  BOOST_REQUIRE_MESSAGE(submitted.status == 0, submitted.err);
  // The scheduler passed on both nodes' figures: the metrics hold their history too.
  const auto json = file_text(metrics);
  BOOST_TEST(json.find("\"node\":\"w1\"") != std::string::npos, json.substr(0, 2000));
  BOOST_TEST(json.find("\"node\":\"w2\"") != std::string::npos, json.substr(0, 2000));
  const auto dom = check_rendered(dir, page);
  for (const auto& id : node_chart_ids)
    BOOST_TEST(dom.find("id=\"chart-" + id + "\"") != std::string::npos, id);
}

// #43: the scheduler's --metrics-listen serves a live dashboard at /: during a 2-node job,
// headless chromium shows both nodes by name and the job's loss chart, with no page error and
// no console message (its policy allows fetches of its own status only).
BOOST_AUTO_TEST_CASE(the_schedulers_dashboard_shows_the_nodes_and_the_jobs_loss_in_chromium) {
  if (!chromium_installed())
    return;
  const auto port = strom::test::closed_port();
  strom::test::local_cluster cluster{2,
                                     {"--metrics-listen", "127.0.0.1:" + std::to_string(port)}};
  const auto job = report_job(cluster.dir());
  auto submit = cluster.start({"submit", job.string(), "--epochs", "3"}, "submit");
  // The job has trained a while: its loss has points.
  std::string status;
  strom::test::eventually([&] {
    status = strom::test::http_get(port, "/status.json").value_or("");
    return status.find("\"loss\":[[") != std::string::npos;
  }, submit_limit);
  BOOST_REQUIRE_MESSAGE(status.find("\"loss\":[[") != std::string::npos, status);
  const auto shown = render(cluster.dir(), fmt::format("http://127.0.0.1:{}/", port));
  BOOST_REQUIRE_MESSAGE(shown.status == 0, shown.log);
  BOOST_TEST(shown.dom.find("data-nodes-shown=\"2\"") != std::string::npos,
             shown.dom.substr(0, 3000));
  BOOST_TEST(shown.dom.find("<td>w1</td>") != std::string::npos);
  BOOST_TEST(shown.dom.find("<td>w2</td>") != std::string::npos);
  const std::regex loss_chart{"id=\"loss-1\"[\\s\\S]*?<canvas[^>]*width=\"[1-9]"};
  BOOST_TEST(std::regex_search(shown.dom, loss_chart), shown.dom.substr(0, 3000));
  const auto error = shown.dom.find("data-page-error=\"");
  BOOST_TEST(error == std::string::npos, shown.dom.substr(std::min(error, shown.dom.size()), 300));
  BOOST_TEST(shown.log.find("CONSOLE") == std::string::npos, shown.log);
  const auto ended = submit->wait(submit_limit);
  BOOST_TEST((ended && *ended == 0), submit->err());
}
