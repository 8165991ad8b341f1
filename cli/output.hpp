#pragma once
// Rows of typed cells written as a text table, CSV or JSON: the `--format` shared by runs,
// query, export, best and compare. CSV and JSON stream row by row; a table is buffered to
// measure its columns.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "storage/user_query.hpp"

namespace laconic::cli {

enum class Format { Table, Csv, Json };

/// "table", "csv" or "json"; ConfigError naming the valid ones otherwise.
Format parse_format(const std::string& text);

/// Cells of each type.
storage::Cell text_cell(std::string text);
storage::Cell real_cell(double value);
storage::Cell integer_cell(std::int64_t value);
storage::Cell null_cell();
/// A JSON document (an object in JSON output, its text elsewhere).
storage::Cell json_cell(std::string json);

/// Shortest text that reads back as the same double ("0.1", "1e-05"); "nan", "inf", "-inf".
std::string number_text(double value);

/// Appends {"column": value, ...} with RowWriter's JSON encoding of each cell (below).
void append_json_object(std::string& out, const std::vector<std::string>& columns,
                        const std::vector<storage::Cell>& cells);

/// Writes header() once, row() per row, then finish(). Encodings:
/// - table: NULL as "NULL", reals with up to 10 significant digits, NaN "nan", infinities
///   "inf" / "-inf"; text as is.
/// - csv (RFC 4180): header line, fields quoted when they hold a comma, quote or line break;
///   NULL as an empty field, reals in shortest round-trip form, NaN "nan", infinities "inf" /
///   "-inf".
/// - json: an array of objects, one per line; NULL as null, NaN as the string "NaN",
///   infinities as "Infinity" / "-Infinity" (JSON has no such numbers), JSON cells embedded.
class RowWriter {
 public:
  RowWriter(std::ostream& out, Format format);
  void header(const std::vector<std::string>& columns);
  void row(const std::vector<storage::Cell>& cells);
  /// Prints a buffered table / closes the JSON array. Safe to call once.
  void finish();
  std::int64_t rows() const { return rows_; }

 private:
  std::ostream& out_;
  Format format_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> table_;
  std::int64_t rows_ = 0;
  bool finished_ = false;
  std::string line_;  // reused buffer of one CSV / JSON line
};

}  // namespace laconic::cli
