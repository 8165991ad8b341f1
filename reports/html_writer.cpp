#include "reports/html_writer.hpp"

#include <sstream>

namespace laconic::reports {
namespace {

const char* const kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f0f0f0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafafa; }
code { background: #f4f4f4; padding: 0 0.2em; }
figure { margin: 1em 0 1.5em; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #444; max-width: 60em; }
p.missing { background: #fff3f3; border-left: 4px solid #c33; padding: 0.4em 0.8em; }
nav.toc { background: #f7f7f7; border: 1px solid #ddd; padding: 0.4em 1em; display: inline-block; }
nav.toc ol { margin: 0.3em 0; padding-left: 1.4em; }
section#answer p { font-size: 1.05em; max-width: 60em; }
details { margin: 0.3em 0 1em; max-width: 60em; color: #444; }
details summary { cursor: pointer; color: #555; }
)css";

const char* align_class(Align align) { return align == Align::Right ? " class=\"num\"" : ""; }

void render_html_table(std::ostringstream& out, const Table& table) {
  if (!table.title.empty()) out << "<h3>" << html_escape(table.title) << "</h3>\n";
  out << "<table>\n<thead><tr>";
  for (const auto& column : table.columns)
    out << "<th" << align_class(column.align) << ">" << html_escape(column.header) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out << "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      out << "<td" << align_class(table.columns[i].align) << ">" << html_escape(row[i]) << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

// The PNG is embedded (the page opens offline, alone); the SVG is linked, next to the page.
void render_html_figure(std::ostringstream& out, const Figure& figure) {
  const std::string svg = "figures/" + figure.name + ".svg";
  if (!figure.missing.empty()) {
    out << "<p class=\"missing\"><strong>Figure missing: " << html_escape(figure.title) << "</strong> ("
        << html_escape(svg) << "): " << html_escape(figure.missing) << "</p>\n";
    return;
  }
  out << "<figure>\n<img src=\"" << html_escape(figure.png_data_uri) << "\" alt=\"" << html_escape(figure.title)
      << "\">\n<figcaption><strong>" << html_escape(figure.title) << ".</strong> " << html_escape(figure.caption)
      << " <a href=\"" << html_escape(svg) << "\">SVG</a></figcaption>\n</figure>\n";
}

// A paragraph of the lead, or its list ("- " lines) as a <ul>.
void render_html_lead_block(std::ostringstream& out, const LeadBlock& block) {
  if (block.items.empty()) {
    out << "<p>" << html_escape(block.text) << "</p>\n";
    return;
  }
  out << "<ul>\n";
  for (const std::string& item : block.items) out << "<li>" << html_escape(item) << "</li>\n";
  out << "</ul>\n";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_html(const Report& report) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << html_escape(report.title)
      << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  out << "<h1>" << html_escape(report.title) << "</h1>\n<ul>\n";
  for (const auto& fact : report.facts) {
    out << "<li>" << html_escape(fact.label) << ": ";
    if (fact.code)
      out << "<code>" << html_escape(fact.value) << "</code>";
    else
      out << html_escape(fact.value);
    out << "</li>\n";
  }
  out << "</ul>\n";
  out << "<nav class=\"toc\"><strong>Contents</strong>\n<ol>\n";
  for (const auto& section : report.sections)
    out << "<li><a href=\"#" << html_escape(section_anchor(section)) << "\">" << html_escape(section.heading)
        << "</a></li>\n";
  out << "</ol>\n</nav>\n";
  for (const auto& section : report.sections) {
    out << "<section id=\"" << html_escape(section_anchor(section)) << "\">\n<h2>" << html_escape(section.heading)
        << "</h2>\n";
    for (const LeadBlock& block : lead_blocks(section.lead)) render_html_lead_block(out, block);
    if (!section.text.empty())
      out << "<details><summary>How this is computed</summary>\n<p>" << html_escape(section.text)
          << "</p>\n</details>\n";
    for (const auto& figure : section.figures) render_html_figure(out, figure);
    for (const auto& table : section.tables) render_html_table(out, table);
    out << "</section>\n";
  }
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace laconic::reports
