#include "reports/markdown_writer.hpp"

#include <sstream>

namespace laconic::reports {
namespace {

void render_markdown_table(std::ostringstream& out, const Table& table) {
  if (!table.title.empty()) out << "### " << markdown_escape(table.title) << "\n\n";
  out << "|";
  for (const auto& column : table.columns) out << " " << markdown_escape(column.header) << " |";
  out << "\n|";
  for (const auto& column : table.columns) out << (column.align == Align::Right ? "---:|" : "---|");
  out << "\n";
  for (const auto& row : table.rows) {
    out << "|";
    for (const auto& cell : row) out << " " << markdown_escape(cell) << " |";
    out << "\n";
  }
  if (table.rows.empty()) out << "\n_no rows_\n";
  out << "\n";
}

// The PNG shows inline on most Markdown viewers; the SVG sits next to it.
void render_markdown_figure(std::ostringstream& out, const Figure& figure) {
  const std::string path = "figures/" + figure.name;
  if (!figure.missing.empty()) {
    out << "**Figure missing: " << markdown_escape(figure.title) << "** (" << path
        << ".svg): " << markdown_escape(figure.missing) << "\n\n";
    return;
  }
  out << "![" << markdown_escape(figure.title) << "](" << path << ".png)\n\n"
      << "*" << markdown_escape(figure.title) << ".* " << markdown_escape(figure.caption) << " [SVG](" << path
      << ".svg)\n\n";
}

// A paragraph of the lead, or its list: one "- " line per item.
void render_markdown_lead_block(std::ostringstream& out, const LeadBlock& block) {
  if (block.items.empty()) {
    out << markdown_escape(block.text) << "\n\n";
    return;
  }
  for (const std::string& item : block.items) out << "- " << markdown_escape(item) << "\n";
  out << "\n";
}

}  // namespace

std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\\':
      case '|':
      case '<':
      case '>':
      case '`':
      case '*':
      case '[':
      case ']':
        out += '\\';
        out += c;
        break;
      case '\n':
        out += ' ';  // a newline would end the table row
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_markdown(const Report& report) {
  std::ostringstream out;
  out << "# " << markdown_escape(report.title) << "\n\n";
  for (const auto& fact : report.facts) {
    out << "- " << markdown_escape(fact.label) << ": ";
    // Inside a code span nothing is markup; only a backtick could end it early.
    if (fact.code && fact.value.find('`') == std::string::npos)
      out << "`" << fact.value << "`\n";
    else
      out << markdown_escape(fact.value) << "\n";
  }
  out << "\nContents:\n\n";
  for (std::size_t i = 0; i < report.sections.size(); ++i)
    out << i + 1 << ". [" << markdown_escape(report.sections[i].heading) << "](#" << section_anchor(report.sections[i])
        << ")\n";
  out << "\n";
  for (const auto& section : report.sections) {
    // The explicit anchor: viewers derive heading ids differently (or not at all).
    out << "<a id=\"" << section_anchor(section) << "\"></a>\n\n## " << markdown_escape(section.heading) << "\n\n";
    for (const LeadBlock& block : lead_blocks(section.lead)) render_markdown_lead_block(out, block);
    if (!section.text.empty())
      out << "<details><summary>How this is computed</summary>\n\n"
          << markdown_escape(section.text) << "\n\n</details>\n\n";
    for (const auto& figure : section.figures) render_markdown_figure(out, figure);
    for (const auto& table : section.tables) render_markdown_table(out, table);
  }
  return out.str();
}

}  // namespace laconic::reports
