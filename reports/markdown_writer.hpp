#pragma once
// Renders a Report as GitHub-flavoured Markdown (pipe tables).
#include <string>
#include <string_view>

#include "reports/table.hpp"

namespace laconic::reports {

/// Backslash-escapes the characters that would end a table cell or start markup: \ | < > ` * [ ].
std::string markdown_escape(std::string_view text);

/// The whole document, ending in a newline.
std::string render_markdown(const Report& report);

}  // namespace laconic::reports
