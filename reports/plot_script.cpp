#include "reports/plot_script.hpp"

#include <cmath>

#include "reports/format.hpp"

namespace laconic::reports {

std::string gnuplot_quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string data_line(const std::vector<double>& values) {
  std::string out;
  for (double v : values) {
    if (!out.empty()) out += ' ';
    out += std::isnan(v) ? "NaN" : raw_number(v);
  }
  return out + "\n";
}

std::string xtics_command(const std::vector<std::string>& labels) {
  std::string out = "set xtics rotate by -30 left (";
  for (std::size_t i = 0; i < labels.size(); ++i)
    out += (i ? ", " : "") + gnuplot_quote(labels[i]) + " " + std::to_string(i);
  return out + ")\n";
}

}  // namespace laconic::reports
