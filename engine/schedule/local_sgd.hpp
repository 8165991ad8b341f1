#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/schedule/schedule.hpp"

namespace laconic::schedule {

struct LocalSgdOptions {
  StepValue period = 4;
  JoinPolicy join = JoinPolicy::NextRound;

  static OptionFields<LocalSgdOptions> fields();
  static ScheduleTraits traits(const LocalSgdOptions&) {
    return {.staleness_bound = std::nullopt, .averages_models = true, .exchanges_each_gradient = false};
  }
  static std::string why_not_update_exchange(const ComponentSpec&) {
    return "local SGD already exchanges what its local steps changed in the model, an update of `period` steps";
  }
};

/// Counts one more local step toward `period` (the file's function asked at `at`; `field` names
/// it in the error when it returns anything but an integer >= 1): true when the steps since the
/// last average reach it.
bool period_reached(std::int64_t& since, const StepValue& period, const char* field, const StepPoint& at);

/// The `join` field of a schedule of rounds: when a worker that comes back (churn) joins.
template <class Options>
OptionFields<Options>& join_policy_field(OptionFields<Options>& fields, JoinPolicy Options::*member) {
  return fields.choice("join", member,
                       "with churn, when a worker that comes back joins: \"next_round\" at the next round's start, "
                       "taking the averaged weights; \"now\" at the step it comes back, mid-round, taking worker 0's "
                       "local weights",
                       {{JoinPolicy::NextRound, "next_round"}, {JoinPolicy::Now, "now"}});
}

/// Local SGD (Stich 2019; "periodic averaging"): every worker takes `period` optimizer steps on
/// its own gradients, then the models are averaged (the change since the last average goes
/// through the compressor and the topology, like a gradient). With period 1 and plain SGD
/// (momentum included, as it is linear) it is synchronous SGD. A period given as a function
/// of (epoch, step) is asked after every local step: the models are averaged once the steps
/// since the last average reach it (every worker asks the same function the same question).
class LocalSgdSchedule : public Schedule {
 public:
  explicit LocalSgdSchedule(LocalSgdOptions options) : Schedule(LocalSgdOptions::traits(options)), options_(options) {}
  std::string name() const override { return "local_sgd"; }
  void step(StepActions& actions, const StepPoint& at) override;
  void save_state(StateWriter& out) const override { out.i64(since_average_); }
  void load_state(StateReader& in) override { since_average_ = in.i64(); }
  void pass(const StepPoint& at) override;
  bool round_starts() const override { return since_average_ == 0; }
  bool admits_joiners() const override { return options_.join == JoinPolicy::Now || round_starts(); }

 private:
  LocalSgdOptions options_;
  std::int64_t since_average_ = 0;  // local steps since the last average
};

}  // namespace laconic::schedule
