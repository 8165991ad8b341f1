#pragma once
#include "ui/server.hpp"

namespace laconic::cli {

/// `laconic ui`: serves the pages over `options.db` (read-only) until Ctrl-C or SIGTERM, after
/// printing the URL; returns 0 then.
int ui_command(const ui::UiOptions& options);

}  // namespace laconic::cli
