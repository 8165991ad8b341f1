#pragma once
// Draws a report's figures with one gnuplot process: every figure as NAME.svg and NAME.png.
#include <filesystem>
#include <string>
#include <vector>

#include "reports/plot_script.hpp"

namespace laconic::reports {

struct GnuplotOptions {
  std::string executable = "gnuplot";  ///< a path, or a name looked up in PATH
  double timeout_seconds = 60;         ///< gnuplot is killed after this long
};

/// Writes each plot's data files and NAME.gp, and figures.gp that draws them all, into `dir`;
/// runs gnuplot once there (its output goes to dir/gnuplot.log), killing it after the timeout.
/// Returns one entry per plot: "" when NAME.svg and NAME.png were both drawn, else why not
/// ("cannot run gnuplot 'x': No such file or directory"). Never throws for gnuplot's failures;
/// ConfigError if `dir` cannot be written.
std::vector<std::string> draw_figures(const std::vector<FigurePlot>& plots, const std::filesystem::path& dir,
                                      const GnuplotOptions& options);

}  // namespace laconic::reports
