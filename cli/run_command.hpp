#pragma once
#include <atomic>
#include <string>

namespace laconic::cli {

struct RunArgs {
  std::string file;               ///< experiment file
  std::string db = "laconic.db";  ///< SQLite database
  bool resume = false;            ///< skip runs already FINISHED with the same configuration
  std::string only;               ///< run only runs whose name contains this (empty: all)
  bool dry_run = false;           ///< list what would run, as `check`, and stop
  std::string executable;         ///< this binary, started again as `laconic worker`
};

/// `laconic run`: loads the experiment (nothing is recorded if it does not load), records its
/// runs as QUEUED, then runs them one after another. Returns 0 when every run finished, 1 when
/// one failed, 130 when interrupted by `stop`.
int run_command(const RunArgs& args, const std::atomic<bool>& stop);

}  // namespace laconic::cli
