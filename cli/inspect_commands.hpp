#pragma once
// `laconic show RUN` and `laconic compare RUN RUN ...`: one run in full, or several side by side.
#include <cstdint>
#include <string>
#include <vector>

namespace laconic::cli {

/// `laconic show`: header facts, swept variables, the resolved configuration, the run_summary
/// table and the per-epoch table of one run; `format` "table" or "json" (the same in one
/// object: run fields, summary, epochs).
int show_command(const std::string& db, std::int64_t run_id, const std::string& format = "table");

struct CompareArgs {
  std::string db;
  std::vector<std::int64_t> runs;
  bool diff_only = false;  ///< print only the rows whose values differ
  std::string format = "table";
};

/// `laconic compare`: one column per run; rows are the flattened configuration, then status,
/// wall time, compression ratio and every recorded metric; "*" marks rows that differ.
int compare_command(const CompareArgs& args);

/// The figure `compare` shows for a metric key: "sum" for byte counts, "last" for per-epoch
/// keys (test_*, epoch_*, consensus_distance, stopped_early) and train_loss / lr, "mean" for
/// the rest (times, staleness).
std::string compare_figure(const std::string& key);

}  // namespace laconic::cli
