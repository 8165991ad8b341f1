#include "reports/churn.hpp"

#include <map>

#include "engine/core/metric_keys.hpp"
#include "storage/queries.hpp"

namespace laconic::reports {

double MemberChange::projected_seconds(const LinkSpec& link) const {
  return join_bytes > 0 ? link.project(2.0 * static_cast<double>(joined.size()), join_bytes) : 0.0;
}

std::vector<MemberChange> member_changes_of(storage::Database& db, std::int64_t run_id) {
  std::map<std::int64_t, MemberChange> at;
  const auto change = [&](std::int64_t step) -> MemberChange& {
    MemberChange& c = at[step];
    c.step = step;
    return c;
  };
  for (const MetricRecord& r : storage::metrics_of(db, run_id, keys::kMemberChange))
    (r.value > 0 ? change(r.step).joined : change(r.step).left).push_back(r.worker);
  for (const MetricRecord& r : storage::metrics_of(db, run_id, keys::kMembers))
    change(r.step).members = static_cast<std::int64_t>(r.value);
  for (const MetricRecord& r : storage::metrics_of(db, run_id, keys::kJoinBytes)) change(r.step).join_bytes += r.value;
  for (const MetricRecord& r : storage::metrics_of(db, run_id, keys::kJoinSeconds))
    change(r.step).join_seconds = r.value;
  for (const MetricRecord& r : storage::metrics_of(db, run_id, keys::kDetectSeconds))
    change(r.step).detect_seconds = r.value;
  for (const MetricRecord& r : storage::metrics_of(db, run_id, keys::kRegroupSeconds))
    change(r.step).regroup_seconds = r.value;
  std::vector<MemberChange> out;
  for (auto& [step, c] : at) out.push_back(std::move(c));
  return out;
}

bool changes_membership(const nlohmann::json& config) {
  const bool churns = config.contains("churn") && config["churn"].value("name", "calm") != "calm";
  return churns || config.value("elastic", "false") == "true";
}

namespace {

// The configuration a churned run and its calm twin share: everything but the churn, the
// elasticity and what names the run.
nlohmann::json without_churn(nlohmann::json config) {
  for (const char* key : {"churn", "elastic", "name", "swept", "repetition"}) config.erase(key);
  return config;
}

}  // namespace

const ReportRun* calm_twin(const ReportRun& run, const std::vector<const ReportRun*>& runs) {
  const nlohmann::json shared = without_churn(run.config);
  for (const ReportRun* other : runs)
    if (!changes_membership(other->config) && other->seed == run.seed &&
        other->swept.value("placement", nlohmann::json()) == run.swept.value("placement", nlohmann::json()) &&
        without_churn(other->config) == shared)
      return other;
  return nullptr;
}

}  // namespace laconic::reports
