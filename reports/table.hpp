#pragma once
// The document model every writer renders: a report is a title, a few facts and sections of
// tables and figures whose cells are already formatted text. Writers only escape and lay out.
#include <string>
#include <vector>

#include "engine/core/error.hpp"

namespace laconic::reports {

/// How a column's cells line up; numbers are right-aligned.
enum class Align { Left, Right };

struct Column {
  std::string header;  ///< with the unit: "bytes sent", "forward (s/step)"
  Align align = Align::Left;
};

/// The machine-readable twin of a table, written as tables/<slug>.csv: raw numbers ("" for
/// none), not the formatted cells.
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

/// A table of text cells; every row has one cell per column.
struct Table {
  std::string title;  ///< "" for none; rendered as a sub-heading
  std::string slug;   ///< file name of its CSV without ".csv"; made unique by the report writer
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
  /// Raw values for the CSV; when its header is empty the CSV holds the formatted cells.
  CsvTable csv;

  /// InvariantError if the row's size differs from the number of columns.
  void add_row(std::vector<std::string> row) {
    LACONIC_ENFORCE(row.size() == columns.size(), "expected ", columns.size(), " cells, got ", row.size());
    rows.push_back(std::move(row));
  }
  /// A formatted row and its raw CSV row (sized as csv.header).
  void add_row(std::vector<std::string> row, std::vector<std::string> raw) {
    LACONIC_ENFORCE(raw.size() == csv.header.size(), "expected ", csv.header.size(), " CSV cells, got ", raw.size());
    add_row(std::move(row));
    csv.rows.push_back(std::move(raw));
  }
};

/// A figure drawn by gnuplot as figures/<name>.svg and figures/<name>.png.
struct Figure {
  std::string name;     ///< file stem, [a-z0-9_] only
  std::string title;    ///< shown above the figure and as its alt text
  std::string caption;  ///< what is plotted, with units; says measured or projected
  /// "data:image/png;base64,..." once drawn; the HTML page embeds it.
  std::string png_data_uri;
  /// Why the figure is missing ("gnuplot not found: ..."); "" when it was drawn.
  std::string missing;
};

/// One labelled value shown under the title ("file": "experiments/fmnist.lua").
struct Fact {
  std::string label;
  std::string value;
  bool code = false;  ///< render the value as code (paths, hashes)
};

/// A heading, an optional paragraph, then figures and tables.
struct Section {
  std::string heading;
  std::string text;
  std::vector<Table> tables;
  std::vector<Figure> figures;
};

struct Report {
  std::string title;
  std::vector<Fact> facts;
  std::vector<Section> sections;
};

}  // namespace laconic::reports
