#include "cli/output.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/format.hpp"
#include "engine/core/error.hpp"

namespace laconic::cli {
namespace {

using storage::Cell;

void append_number(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  if (std::isinf(value)) {
    out += value > 0 ? "inf" : "-inf";
    return;
  }
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

void append_integer(std::string& out, std::int64_t value) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out = "x'";
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out + "'";
}

std::string table_text(const Cell& cell) {
  switch (cell.type) {
    case Cell::Type::Null:
      return "NULL";
    case Cell::Type::Integer:
      return std::to_string(cell.integer);
    case Cell::Type::Real: {
      if (std::isnan(cell.real)) return "nan";
      if (std::isinf(cell.real)) return cell.real > 0 ? "inf" : "-inf";
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.10g", cell.real);
      return buf;
    }
    case Cell::Type::Blob:
      return hex(cell.text);
    default: {
      std::string text = cell.text;  // one cell, one line
      for (char& c : text)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
      return text;
    }
  }
}

void append_csv_field(std::string& out, const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_json_string(std::string& out, const std::string& text) {
  out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

Format parse_format(const std::string& text) {
  if (text == "table") return Format::Table;
  if (text == "csv") return Format::Csv;
  if (text == "json") return Format::Json;
  throw ConfigError(str_cat("unknown format '", text, "'; known: table, csv, json"));
}

Cell text_cell(std::string text) {
  Cell c;
  c.type = Cell::Type::Text;
  c.text = std::move(text);
  return c;
}
Cell real_cell(double value) {
  Cell c;
  c.type = Cell::Type::Real;
  c.real = value;
  return c;
}
Cell integer_cell(std::int64_t value) {
  Cell c;
  c.type = Cell::Type::Integer;
  c.integer = value;
  return c;
}
Cell null_cell() { return Cell{}; }
Cell json_cell(std::string json) {
  Cell c;
  c.type = Cell::Type::Json;
  c.text = std::move(json);
  return c;
}

std::string number_text(double value) {
  std::string out;
  append_number(out, value);
  return out;
}

void append_json_object(std::string& out, const std::vector<std::string>& columns, const std::vector<Cell>& cells) {
  out += '{';
  for (std::size_t c = 0; c < cells.size() && c < columns.size(); ++c) {
    if (c > 0) out += ", ";
    append_json_string(out, columns[c]);
    out += ": ";
    const Cell& cell = cells[c];
    switch (cell.type) {
      case Cell::Type::Null:
        out += "null";
        break;
      case Cell::Type::Integer:
        append_integer(out, cell.integer);
        break;
      case Cell::Type::Real:
        if (std::isnan(cell.real))
          out += "\"NaN\"";
        else if (std::isinf(cell.real))
          out += cell.real > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        else
          append_number(out, cell.real);
        break;
      case Cell::Type::Json:
        out += cell.text.empty() ? "null" : cell.text;
        break;
      case Cell::Type::Blob:
        append_json_string(out, hex(cell.text));
        break;
      default:
        append_json_string(out, cell.text);
    }
  }
  out += '}';
}

RowWriter::RowWriter(std::ostream& out, Format format) : out_(out), format_(format) {}

void RowWriter::header(const std::vector<std::string>& columns) {
  columns_ = columns;
  if (format_ == Format::Csv) {
    line_.clear();
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) line_ += ',';
      append_csv_field(line_, columns[c]);
    }
    line_ += '\n';
    out_ << line_;
  } else if (format_ == Format::Json) {
    out_ << "[";
  }
}

void RowWriter::row(const std::vector<Cell>& cells) {
  if (format_ == Format::Table) {
    std::vector<std::string> texts;
    texts.reserve(cells.size());
    for (const Cell& cell : cells) texts.push_back(table_text(cell));
    table_.push_back(std::move(texts));
    ++rows_;
    return;
  }
  line_.clear();
  if (format_ == Format::Csv) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line_ += ',';
      const Cell& cell = cells[c];
      switch (cell.type) {
        case Cell::Type::Null:
          break;
        case Cell::Type::Integer:
          append_integer(line_, cell.integer);
          break;
        case Cell::Type::Real:
          append_number(line_, cell.real);
          break;
        case Cell::Type::Blob:
          line_ += hex(cell.text);
          break;
        default:
          append_csv_field(line_, cell.text);
      }
    }
    line_ += '\n';
  } else {
    line_ += rows_ == 0 ? "\n" : ",\n";
    append_json_object(line_, columns_, cells);
  }
  out_ << line_;
  ++rows_;
}

void RowWriter::finish() {
  if (finished_) return;
  finished_ = true;
  if (format_ == Format::Table)
    out_ << text_table(columns_, table_);
  else if (format_ == Format::Json)
    out_ << (rows_ == 0 ? "]\n" : "\n]\n");
  out_.flush();
}

}  // namespace laconic::cli
