#include "reports/report.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/core/error.hpp"
#include "reports/base64.hpp"
#include "reports/csv_writer.hpp"
#include "reports/html_writer.hpp"
#include "reports/markdown_writer.hpp"
#include "reports/report_model.hpp"

namespace laconic::reports {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw ConfigError(str_cat("cannot write report file ", path.string(), ": ", std::strerror(errno)));
}

void make_directory(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw ConfigError(str_cat("cannot create report directory ", dir.string(), ": ", error.message()));
}

std::string read_binary(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every table's CSV under a unique name: a repeated slug gets -2, -3, ...
std::vector<std::string> write_csvs(Report& report, const fs::path& dir) {
  std::map<std::string, int> used;
  std::vector<std::string> paths;
  for (auto& section : report.sections)
    for (auto& table : section.tables) {
      std::string slug = table.slug.empty() ? "table" : table.slug;
      if (const int n = ++used[slug]; n > 1) slug += "-" + std::to_string(n);
      table.slug = slug;
      const fs::path path = dir / (slug + ".csv");
      write_file(path, render_csv(table));
      paths.push_back(path.string());
    }
  return paths;
}

}  // namespace

ReportPaths write_report(storage::Database& db, const std::vector<std::string>& experiments, const std::string& out_dir,
                         const ReportOptions& options) {
  // Build first, so a missing experiment leaves no empty directory behind.
  ReportDraft draft = build_report(db, experiments, {options.target, options.tolerance, options.baseline}, options.links,
                                   options.hardware ? &*options.hardware : nullptr, options.added_sections);
  const fs::path dir(out_dir);
  make_directory(dir / "tables");
  ReportPaths paths{
      (dir / "report.md").string(), (dir / "index.html").string(), {}, draft.metric, draft.target, draft.targets, {}};
  paths.csv = write_csvs(draft.report, dir / "tables");

  const fs::path figures = dir / "figures";
  const auto missing = draw_figures(draft.plots, figures, options.gnuplot);
  std::map<std::string, std::string> missing_of;
  std::size_t drawn = 0;
  for (std::size_t i = 0; i < draft.plots.size(); ++i) {
    missing_of[draft.plots[i].figure.name] = missing[i];
    if (missing[i].empty())
      ++drawn;
    else
      paths.warnings.push_back(str_cat("figure ", draft.plots[i].figure.name, " missing: ", missing[i]));
  }
  for (auto& section : draft.report.sections)
    for (auto& figure : section.figures) {
      figure.missing = missing_of[figure.name];
      if (figure.missing.empty())
        figure.png_data_uri = "data:image/png;base64," + base64(read_binary(figures / (figure.name + ".png")));
    }
  if (!draft.plots.empty())
    draft.report.facts.push_back(
        {"figures",
         str_cat(drawn, " of ", draft.plots.size(), " drawn by gnuplot (figures/*.svg, figures/*.png)",
                 drawn < draft.plots.size() ? "; missing ones are named where they belong" : ""),
         false});
  write_file(paths.markdown, render_markdown(draft.report));
  write_file(paths.html, render_html(draft.report));
  return paths;
}

}  // namespace laconic::reports
