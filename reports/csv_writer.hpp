#pragma once
// Tables as CSV (RFC 4180): comma-separated, CRLF line ends, a field quoted when it holds a
// comma, a quote, CR or LF, and quotes inside doubled.
#include <string>
#include <string_view>

#include "reports/table.hpp"

namespace laconic::reports {

/// One field, quoted only when RFC 4180 requires it: csv_field("a,\"b\"") == "\"a,\"\"b\"\"\"".
std::string csv_field(std::string_view text);

/// The table's CSV: its raw twin (Table::csv) when it has one, else its formatted cells.
std::string render_csv(const Table& table);

}  // namespace laconic::reports
