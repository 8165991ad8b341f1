// Figures: drawn by gnuplot as SVG and PNG, named as missing (with the reason) when gnuplot
// cannot draw them, and strings from experiment files kept inert in the script and the page.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "reports/report.hpp"
#include "tests/reports/fixture.hpp"
#include "skip.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::reports::testing;

namespace {

const char* const kFigures[] = {"metric_vs_compression", "step_time", "convergence_epoch", "convergence_time",
                                "bits_per_parameter"};
const char* const kHostile = "<script>alert('pwned')</script> \\\" & ''";

bool gnuplot_available() { return std::system("gnuplot -e 'exit' >/dev/null 2>&1") == 0; }

// Two configurations, one named by a hostile compressor and run name.
std::unique_ptr<storage::Database> hostile_database(const TempDir& dir) {
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("<b>figures</b>", "x'.lua", "h");
  RunSpec plain;
  plain.name = "plain";
  plain.swept = {{"compressor", Value{std::string("none")}}};
  record_run(*db, recorder, e, "figures", plain);
  RunSpec hostile = plain;
  hostile.name = kHostile;
  hostile.compressor = kHostile;
  hostile.swept = {{"compressor", Value{std::string(kHostile)}}, {"compressor.ratio", Value{0.5}}};
  hostile.bytes_sent = hostile.payload_bytes = 5000;
  record_run(*db, recorder, e, "figures", hostile);
  return db;
}

}  // namespace

TEST_CASE("every figure is drawn as a non-empty SVG and PNG, the PNG embedded in index.html",
          "[reports][figures][needs-gnuplot]") {
  if (!gnuplot_available()) LACONIC_SKIP("gnuplot is not installed; figures cannot be drawn here");
  TempDir dir("figures-drawn");
  auto db = hostile_database(dir);
  const auto paths = write_report(*db, "<b>figures</b>", dir.file("out"));
  INFO((paths.warnings.empty() ? std::string() : paths.warnings.front()));
  CHECK(paths.warnings.empty());
  const std::string html = read_text(paths.html);
  for (const char* name : kFigures) {
    INFO(name);
    const std::string svg = read_text(dir.file(std::string("out/figures/") + name + ".svg"));
    const std::string png = read_text(dir.file(std::string("out/figures/") + name + ".png"));
    CHECK(svg.find("<svg") != std::string::npos);
    CHECK(svg.find("</svg>") != std::string::npos);
    REQUIRE(png.size() > 1000);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    CHECK(html.find(std::string("<a href=\"figures/") + name + ".svg\">SVG</a>") != std::string::npos);
    // Figure names never come from the experiment, so only the labels need escaping.
    CHECK(svg.find("<script>") == std::string::npos);
  }
  CHECK(html.find("<img src=\"data:image/png;base64,iVBORw0KGgo") != std::string::npos);
  CHECK(has_line(read_text(paths.markdown), "- figures: 5 of 5 drawn by gnuplot (figures/\\*.svg, figures/\\*.png)"));
}

TEST_CASE("hostile run names stay text in the HTML, the Markdown and the gnuplot script", "[reports][figures][html]") {
  TempDir dir("figures-hostile");
  auto db = hostile_database(dir);
  const auto paths = write_report(*db, "<b>figures</b>", dir.file("out"));
  const std::string html = read_text(paths.html);
  INFO(html.substr(0, 4000));
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt; \\&quot; &amp; &#39;&#39;") !=
        std::string::npos);
  CHECK(read_text(paths.markdown).find("<script>") == std::string::npos);
  // In a double-quoted gnuplot string, the quote and the backslash are escaped.
  const std::string script = read_text(dir.file("out/figures/step_time.gp"));
  CHECK(script.find(R"("<script>alert('pwned')</script> \\\" & '' ratio=0.5" 1)") != std::string::npos);
  if (gnuplot_available()) CHECK(paths.warnings.empty());  // the quoted labels parsed
}

TEST_CASE("without gnuplot the report keeps its tables and names each missing figure and why", "[reports][figures]") {
  TempDir dir("figures-missing");
  auto db = hostile_database(dir);
  ReportOptions options;
  options.gnuplot.executable = dir.file("no-such-gnuplot");
  const auto paths = write_report(*db, "<b>figures</b>", dir.file("out"), options);
  const std::string why = "cannot run gnuplot '" + options.gnuplot.executable +
                          "': No such file or directory (install gnuplot-nox, or give --gnuplot PATH)";
  REQUIRE(paths.warnings.size() == 5);
  CHECK(paths.warnings[0] == "figure metric_vs_compression missing: " + why);
  const std::string md = read_text(paths.markdown);
  CHECK(has_line(md, "**Figure missing: Time per step: measured and projected** (figures/step_time.svg): " + why));
  CHECK(has_line(md,
                 "- figures: 0 of 5 drawn by gnuplot (figures/\\*.svg, figures/\\*.png); missing ones are named "
                 "where they belong"));
  const std::string html = read_text(paths.html);
  CHECK(html.find("<p class=\"missing\"><strong>Figure missing: Time per step: measured and projected</strong>") !=
        std::string::npos);
  CHECK(html.find("data:image/png") == std::string::npos);
  CHECK(std::filesystem::file_size(dir.file("out/tables/final_metric.csv")) > 0);
  CHECK(std::filesystem::exists(dir.file("out/figures/step_time.dat")));  // the data is there to plot by hand
}

TEST_CASE("a gnuplot that hangs is killed after its time limit", "[reports][figures]") {
  TempDir dir("figures-hang");
  auto db = hostile_database(dir);
  const std::string fake = dir.file("slow-gnuplot");
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\nexec sleep 30\n";
  }
  ::chmod(fake.c_str(), 0755);
  ReportOptions options;
  options.gnuplot = {fake, 0.3};
  const auto paths = write_report(*db, "<b>figures</b>", dir.file("out"), options);
  REQUIRE(paths.warnings.size() == 5);
  CHECK(paths.warnings[1] == "figure step_time missing: gnuplot was killed after its time limit of 0.3 s");
}

namespace {

// Changes the working directory for one test and back, so relative paths mean what a user's do.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::string& dir) : previous_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~WorkingDirectory() {
    std::error_code ignored;
    std::filesystem::current_path(previous_, ignored);
  }

 private:
  std::filesystem::path previous_;
};

}  // namespace

TEST_CASE("a relative output directory with spaces gets every figure drawn", "[reports][figures][needs-gnuplot]") {
  if (!gnuplot_available()) LACONIC_SKIP("gnuplot is not installed; nothing to draw with");
  TempDir dir("figures-relative");
  auto db = hostile_database(dir);
  WorkingDirectory cwd(dir.file(""));
  const auto paths = write_report(*db, "<b>figures</b>", "my reports/x y");
  CHECK(paths.warnings.empty());
  for (const char* figure : kFigures)
    for (const char* extension : {".svg", ".png"}) {
      const std::string file = std::string("my reports/x y/figures/") + figure + extension;
      INFO(file);
      CHECK(std::filesystem::file_size(file) > 0);
    }
}

TEST_CASE("a gnuplot log that cannot be written is named as the cause, not gnuplot", "[reports][figures]") {
  // A directory where the log should go: unwritable for root as for anyone.
  TempDir dir("figures-log");
  auto db = hostile_database(dir);
  std::filesystem::create_directories(dir.file("out/figures/gnuplot.log"));
  const auto paths = write_report(*db, "<b>figures</b>", dir.file("out"));
  REQUIRE(paths.warnings.size() == 5);
  CHECK(paths.warnings[0] == "figure metric_vs_compression missing: cannot write the gnuplot log " +
                                 dir.file("out/figures/gnuplot.log") + ": Is a directory");
}
