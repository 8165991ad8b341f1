#pragma once
#include <string>

namespace laconic::cli {

/// `laconic list [KIND]`: every registered component with its description and fields.
int list_command(const std::string& kind);

/// `laconic check FILE`: loads the experiment and lists the runs it would execute, training none.
int check_command(const std::string& file);

}  // namespace laconic::cli
