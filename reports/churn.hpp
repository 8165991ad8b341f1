#pragma once
// Workers that leave and join (churn): a run's changes of membership as worker 0 recorded them
// (member_change, members, join_bytes, join_seconds; docs/schema.md), and its calm twin.
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/core/units.hpp"
#include "reports/experiment_runs.hpp"
#include "storage/database.hpp"

namespace laconic::reports {

/// One step at which the workers present changed.
struct MemberChange {
  std::int64_t step = 0;
  std::vector<int> joined, left;
  std::int64_t members = 0;  ///< present from this step on
  double join_bytes = 0;     ///< measured: worker 0's state sent to the joiners
  /// Measured (worker 0's wall clock): the hand-over, check included; NaN where none joined.
  double join_seconds = std::numeric_limits<double>::quiet_NaN();
  /// An elastic run's, measured on worker 0's wall clock (NaN elsewhere): from its failed step's
  /// start to the failure it saw, and from then (or an admission's step start) until the next
  /// generation was connected.
  double detect_seconds = std::numeric_limits<double>::quiet_NaN();
  double regroup_seconds = std::numeric_limits<double>::quiet_NaN();
  /// join_bytes carried over `link`: two messages per joiner (the size, then the state), one
  /// after the other from worker 0; the check's allreduce is left out.
  double projected_seconds(const LinkSpec& link) const;
};

/// Whether a run's recorded configuration lets its workers change: a churn other than calm, or
/// elastic = true.
bool changes_membership(const nlohmann::json& config);

/// The run's changes in step order; empty for a run without churn (or recorded before
/// member_change existed).
std::vector<MemberChange> member_changes_of(storage::Database& db, std::int64_t run_id);

/// The run without churn that `run` is the churned twin of: the same configuration but for its
/// churn (calm) and elasticity (none), the same seed and placement; nullptr when `runs` holds none.
const ReportRun* calm_twin(const ReportRun& run, const std::vector<const ReportRun*>& runs);

}  // namespace laconic::reports
