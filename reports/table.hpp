#pragma once
// The document model every writer renders: a report is a title, a few facts and sections of
// tables and figures whose cells are already formatted text. Writers only escape and lay out.
#include <cstdint>
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

struct Configuration;

/// What a table's row is about, beside its text: the configuration of a row per configuration,
/// the run of a row per run (none for the rest). The UI filters rows by it, never by their text.
struct RowSubject {
  const Configuration* configuration = nullptr;
  std::int64_t run_id = 0;  ///< 0: no run
};

/// A table of text cells; every row has one cell per column.
struct Table {
  std::string title;  ///< "" for none; rendered as a sub-heading
  std::string slug;   ///< file name of its CSV without ".csv"; made unique by the report writer
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
  /// Raw values for the CSV; when its header is empty the CSV holds the formatted cells.
  CsvTable csv;
  /// One per row, in order (add_row adds an empty one; about() names the last row's).
  std::vector<RowSubject> subjects;

  /// InvariantError if the row's size differs from the number of columns.
  void add_row(std::vector<std::string> row) {
    LACONIC_ENFORCE(row.size() == columns.size(), "expected ", columns.size(), " cells, got ", row.size());
    rows.push_back(std::move(row));
    subjects.emplace_back();
  }
  /// A formatted row and its raw CSV row (sized as csv.header).
  void add_row(std::vector<std::string> row, std::vector<std::string> raw) {
    LACONIC_ENFORCE(raw.size() == csv.header.size(), "expected ", csv.header.size(), " CSV cells, got ", raw.size());
    add_row(std::move(row));
    csv.rows.push_back(std::move(raw));
  }
  /// The last row added is about `subject`.
  void about(RowSubject subject) { subjects.back() = subject; }
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

/// A heading, what it says, how it is computed, then figures and tables.
struct Section {
  std::string heading;
  /// How the section's numbers are computed: the HTML page folds it away (<details>).
  std::string text;
  std::vector<Table> tables;
  std::vector<Figure> figures;
  /// What the section says, shown first and never folded; paragraphs separated by blank lines.
  std::string lead = "";
  /// The id the table of contents links to; "" derives it from the heading (section_anchor()).
  std::string anchor = "";
};

/// The section's anchor: its own, else its heading in lower case with runs of other characters
/// than letters and digits turned into one '-' ("Does it pay off?" -> "does-it-pay-off").
inline std::string section_anchor(const Section& section) {
  if (!section.anchor.empty()) return section.anchor;
  std::string out;
  for (const char c : section.heading) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
    if (word)
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

/// The paragraphs of a section's lead (separated by blank lines), empty ones left out.
inline std::vector<std::string> paragraphs(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find("\n\n", begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 2;
  }
  return out;
}

/// One block of a section's lead: a paragraph, or a list where every line of it starts with "- ".
struct LeadBlock {
  std::string text;                ///< the paragraph ("" for a list)
  std::vector<std::string> items;  ///< the list's items, their "- " taken off (empty for a paragraph)
};

/// The lead's blocks, as the HTML page and the UI show them (a paragraph each, or a list).
inline std::vector<LeadBlock> lead_blocks(const std::string& lead) {
  std::vector<LeadBlock> out;
  for (const std::string& paragraph : paragraphs(lead)) {
    LeadBlock block;
    bool list = true;
    for (std::size_t begin = 0; list && begin < paragraph.size();) {
      std::size_t end = paragraph.find('\n', begin);
      if (end == std::string::npos) end = paragraph.size();
      list = paragraph.compare(begin, 2, "- ") == 0;
      if (list) block.items.push_back(paragraph.substr(begin + 2, end - begin - 2));
      begin = end + 1;
    }
    if (!list) block = {paragraph, {}};
    out.push_back(block);
  }
  return out;
}

struct Report {
  std::string title;
  std::vector<Fact> facts;
  std::vector<Section> sections;
};

}  // namespace laconic::reports
