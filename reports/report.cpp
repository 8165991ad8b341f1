#include "reports/report.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/core/error.hpp"
#include "reports/html_writer.hpp"
#include "reports/markdown_writer.hpp"
#include "reports/report_model.hpp"

namespace laconic::reports {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw ConfigError(str_cat("cannot write report file ", path.string(), ": ", std::strerror(errno)));
}

}  // namespace

ReportPaths write_report(storage::Database& db, const std::string& experiment, const std::string& out_dir) {
  // Build first, so a missing experiment leaves no empty directory behind.
  const Report report = build_report(db, experiment);
  const std::filesystem::path dir(out_dir);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw ConfigError(str_cat("cannot create report directory ", out_dir, ": ", error.message()));
  ReportPaths paths{(dir / "report.md").string(), (dir / "index.html").string()};
  write_file(paths.markdown, render_markdown(report));
  write_file(paths.html, render_html(report));
  return paths;
}

}  // namespace laconic::reports
