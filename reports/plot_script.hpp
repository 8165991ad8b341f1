#pragma once
// What a figure hands to gnuplot: its plotting commands and data files, plus the quoting that
// keeps strings from experiment files (run names, swept values) inert inside a gnuplot script.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/table.hpp"

namespace laconic::reports {

/// One figure's gnuplot input. The commands draw it once the terminal and output are set; they
/// read the data files by bare name from the figures directory. Data files hold numbers only.
struct FigurePlot {
  Figure figure;
  std::string commands;
  std::vector<std::pair<std::string, std::string>> data_files;  ///< file name, content
};

/// A double-quoted gnuplot string with " and \ backslash-escaped and control characters
/// blanked: a"b becomes "a\"b". (Single quotes with doubled quotes would need no backslashes,
/// but gnuplot 5.4 reads four quotes in a row as the end of the string.)
std::string gnuplot_quote(std::string_view text);

/// Where every figure puts its key: outside, below the plot. With many configurations a key
/// inside would cover the curves, and long labels beside the plot ("none schedule=diloco
/// inner_steps=50 outer=sgd{lr=0.7,momentum=0.9,nesterov=true}") squeeze it to a sliver.
inline constexpr const char* kKeyBelow = "set key outside below\n";

/// A data-file line of numbers separated by spaces; NaN is written "NaN" (gnuplot skips it).
std::string data_line(const std::vector<double>& values);

/// `set xtics (...)` naming positions 0, 1, ... with `labels`, rotated so long names fit.
std::string xtics_command(const std::vector<std::string>& labels);

}  // namespace laconic::reports
