#include "reports/csv_writer.hpp"

namespace laconic::reports {
namespace {

void add_line(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  out += "\r\n";
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string render_csv(const Table& table) {
  std::string out;
  if (!table.csv.header.empty()) {
    add_line(out, table.csv.header);
    for (const auto& row : table.csv.rows) add_line(out, row);
    return out;
  }
  std::vector<std::string> header;
  for (const auto& column : table.columns) header.push_back(column.header);
  add_line(out, header);
  for (const auto& row : table.rows) add_line(out, row);
  return out;
}

}  // namespace laconic::reports
