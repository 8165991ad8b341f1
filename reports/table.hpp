#pragma once
// The document model every writer renders: a report is a title, a few facts and sections of
// tables whose cells are already formatted text. Writers only escape and lay out.
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

/// A table of text cells; every row has one cell per column.
struct Table {
  std::string title;  ///< "" for none; rendered as a sub-heading
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;

  /// InvariantError if the row's size differs from the number of columns.
  void add_row(std::vector<std::string> row) {
    LACONIC_ENFORCE(row.size() == columns.size(), "expected ", columns.size(), " cells, got ", row.size());
    rows.push_back(std::move(row));
  }
};

/// One labelled value shown under the title ("file": "experiments/fmnist.lua").
struct Fact {
  std::string label;
  std::string value;
  bool code = false;  ///< render the value as code (paths, hashes)
};

/// A heading, an optional paragraph, then tables.
struct Section {
  std::string heading;
  std::string text;
  std::vector<Table> tables;
};

struct Report {
  std::string title;
  std::vector<Fact> facts;
  std::vector<Section> sections;
};

}  // namespace laconic::reports
