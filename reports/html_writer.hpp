#pragma once
// Renders a Report as one self-contained HTML page: inline CSS, no scripts, no external resources.
#include <string>
#include <string_view>

#include "reports/table.hpp"

namespace laconic::reports {

/// Replaces & < > " ' with character references, so text from the database cannot become markup.
std::string html_escape(std::string_view text);

/// The whole page, every string of the report escaped.
std::string render_html(const Report& report);

}  // namespace laconic::reports
