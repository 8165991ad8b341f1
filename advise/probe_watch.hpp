#pragma once
// `laconic advise`'s successive halving (docs/advise.md, "Dropped while it trains"): while a probe
// trains, whether it has fallen behind. Once the baseline's probes have finished (the target is
// theirs), a probe with at least half its evaluations that has not reached the target and whose
// learning curve says it would not within 10x its length (reports/learning_curve.hpp, the rule
// advise drops finished probes by) is ended early: the rest of its budget goes to the others.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "engine/core/units.hpp"

namespace laconic::advise {

class ProbeWatch {
 public:
  /// Probes of `experiment` in the database at `db`, ranked on `link`; each planned for
  /// `probe_steps` steps and `evaluations` evaluations.
  ProbeWatch(std::string db, std::string experiment, LinkSpec link, std::int64_t probe_steps,
             std::int64_t evaluations, std::optional<double> target);

  /// Why run `run_id` should end now ("after 5 of its 8 evaluations (step 500): its curve ..."),
  /// or "" (also whenever the watch cannot tell: it never stops a probe for its own failure).
  std::string operator()(std::int64_t run_id) const;

 private:
  std::string check(std::int64_t run_id) const;

  std::string db_, experiment_;
  LinkSpec link_;
  std::int64_t probe_steps_, evaluations_;
  std::optional<double> target_;
  /// Evaluations each run had when last looked at: the rest of the check (the model, the curve)
  /// runs again only once it has another, so asking every second costs a count.
  mutable std::map<std::int64_t, std::int64_t> seen_;
};

}  // namespace laconic::advise
