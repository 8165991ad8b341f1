#pragma once
#include <string>
#include <vector>

#include "lua/experiment.hpp"

namespace laconic::engine {
class EngineCatalog;
}

namespace laconic::cli {

/// `laconic list [KIND]`: every registered component with its description and fields.
int list_command(const std::string& kind);

/// `laconic list --markdown`: every kind's components as Markdown tables (the generated
/// reference section of docs/dsl.md).
int list_markdown_command();

/// What `laconic check` prints about each run.
enum class CheckListing {
  Summary,  ///< a header (name, file, hash, run count), then the numbered run names
  Names,    ///< the run names only, one per line (--names)
  Json,     ///< a JSON array of {"index", "name", "config"}, config resolved (--json)
};

/// `laconic check FILE [--only TEXT] [--db PATH]`: loads the experiment and lists the runs it
/// would execute (those whose name contains TEXT), training none; with `db_path`, marks those
/// that database holds FINISHED with the same configuration (what `run --resume` skips).
int check_command(const std::string& file, const std::string& only = "", CheckListing listing = CheckListing::Summary,
                  const std::vector<std::string>& overrides = {}, const std::string& db_path = "");


}  // namespace laconic::cli
