#pragma once
// Stopping rules: after each epoch, worker 0 (which evaluates) decides from the epoch's metrics
// whether the run goes on, and tells the other workers, so they all stop after the same epoch.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "engine/core/callbacks.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/core/option_fields.hpp"
#include "engine/core/registry.hpp"
#include "engine/core/state_io.hpp"

namespace laconic::train {

/// What worker 0 knows at the end of an epoch: test_accuracy, test_loss, epoch_train_loss,
/// epoch_time (its own), consensus_distance (gossip).
struct EpochMetrics {
  std::int64_t epoch = 0;
  std::map<std::string, double> values;
};

class StopRule {
 public:
  virtual ~StopRule() = default;
  virtual std::string name() const = 0;
  /// True to stop after this epoch. Called once per epoch, in order, on worker 0 only.
  virtual bool should_stop(const EpochMetrics& metrics) = 0;
  /// False for a rule that never stops: the workers then need not vote after each epoch.
  virtual bool can_stop() const { return true; }
  /// Writes what a checkpoint must keep (early stopping's best value and streak) and reads it
  /// back. Stateless rules keep the defaults.
  virtual void save_state(StateWriter& out) const { (void)out; }
  virtual void load_state(StateReader& in) { (void)in; }
};

struct NeverStopOptions {
  static OptionFields<NeverStopOptions> fields() { return {}; }
};

/// Every epoch runs.
class NeverStop : public StopRule {
 public:
  explicit NeverStop(NeverStopOptions) {}
  std::string name() const override { return "never"; }
  bool should_stop(const EpochMetrics&) override { return false; }
  bool can_stop() const override { return false; }
};

struct EarlyStoppingOptions {
  /// Whether larger is better; Auto: larger for metrics ending in accuracy, else smaller.
  enum class Goal { Auto, Max, Min };
  std::string metric = keys::kTestAccuracy;
  std::int64_t patience = 3;
  double min_delta = 0.0;
  Goal goal = Goal::Auto;

  static OptionFields<EarlyStoppingOptions> fields();
};

/// Stops once `metric` has not improved on its best by more than `min_delta` for `patience`
/// epochs in a row.
class EarlyStopping : public StopRule {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options);
  std::string name() const override { return "early_stopping"; }
  bool should_stop(const EpochMetrics& metrics) override;
  void save_state(StateWriter& out) const override {
    out.flag(seen_);
    out.f64(best_);
    out.i64(streak_);
  }
  void load_state(StateReader& in) override {
    seen_ = in.flag();
    best_ = in.f64();
    streak_ = in.i64();
  }

 private:
  EarlyStoppingOptions options_;
  bool maximize_;
  bool seen_ = false;
  double best_ = 0;
  std::int64_t streak_ = 0;  // epochs in a row without improvement
};

/// Every built-in stopping rule.
Registry<StopRule> builtin_stop_rules();

/// Worker 0 applies the rule and tells every other worker (point to point, so parameter
/// servers are not involved; an elastic run's through its store); all return the same decision.
bool decide_stop(StopRule* rule, RunCallbacks* callbacks, const EpochMetrics& metrics, comm::Communicator& comm,
                 std::int64_t workers);

}  // namespace laconic::train
