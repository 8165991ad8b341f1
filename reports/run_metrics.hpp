#pragma once
// The numbers a report shows for one run, gathered from storage: run_summary for totals and
// means, the per-epoch metrics for the epoch table.
#include <cstdint>
#include <limits>
#include <vector>

#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace laconic::reports {

/// One epoch of a run; NaN where nothing was recorded.
struct EpochMetrics {
  std::int64_t epoch = 0;
  double test_accuracy = std::numeric_limits<double>::quiet_NaN();     ///< fraction, worker 0
  double test_loss = std::numeric_limits<double>::quiet_NaN();         ///< worker 0
  double epoch_train_loss = std::numeric_limits<double>::quiet_NaN();  ///< mean over workers
};

struct RunMetrics {
  storage::RunRow run;
  /// Last epoch's epoch_train_loss averaged over workers, else the last train_loss; NaN if none.
  double final_train_loss = std::numeric_limits<double>::quiet_NaN();
  /// Mean seconds per step and worker (run_summary sum / count); NaN if never recorded.
  double forward = std::numeric_limits<double>::quiet_NaN();
  double backward = std::numeric_limits<double>::quiet_NaN();
  double compress = std::numeric_limits<double>::quiet_NaN();
  double communicate = std::numeric_limits<double>::quiet_NaN();
  std::vector<EpochMetrics> epochs;  ///< ordered by epoch
};

/// Gathers the report's numbers for `run`.
RunMetrics collect_run_metrics(storage::Database& db, const storage::RunRow& run);

}  // namespace laconic::reports
