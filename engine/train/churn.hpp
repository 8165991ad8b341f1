#pragma once
// Workers that leave and join during a run (churn = script { events = "..." }; issue 68): which
// workers take part in each step. A worker absent from a step trains nothing and records nothing
// then; the collectives run around those present (Communicator::set_members); one that comes back
// takes the weights and optimizer state of a worker that stayed (worker.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/core/registry.hpp"

namespace laconic::train {

/// What a worker that joins takes besides worker 0's weights: worker 0's optimizer state
/// ("copied"), the optimizer and error-feedback state of the run's start ("fresh"), or the mean
/// of the optimizer states of the workers that stay ("averaged"); the last two under local SGD
/// and DiLoCo only, where each worker's inner state is its own.
enum class JoinState { Copied, Fresh, Averaged };

/// One change: `ranks` leave (or join) before global step `step`.
struct ChurnEvent {
  bool join = false;
  std::vector<int> ranks;
  std::int64_t step = 0;
  JoinState state = JoinState::Copied;  ///< a join's
  bool operator==(const ChurnEvent&) const = default;
};

class Churn {
 public:
  virtual ~Churn() = default;
  virtual std::string name() const = 0;
  /// Its changes in step order.
  virtual const std::vector<ChurnEvent>& events() const = 0;
  /// Its changes up to global step `step` at least, in a run of `workers` (a drawn churn draws
  /// them as far as asked).
  virtual const std::vector<ChurnEvent>& events_through(std::int64_t /*step*/, std::int64_t /*workers*/) const {
    return events();
  }
  /// The workers (of `workers`) present at global step `step`, in rank order.
  std::vector<int> present(std::int64_t step, std::int64_t workers) const;
  /// The state `rank` joins with at `step`: its latest join's at or before it.
  JoinState join_state(std::int64_t step, int rank, std::int64_t workers) const;
  /// Some join takes `state`.
  virtual bool any_join(JoinState state, std::int64_t workers) const;
  /// Refuses a script the run cannot follow: a rank outside its workers, worker 0 leaving (it
  /// evaluates and records for the run), a leave of an absent rank or a join of a present one.
  void check(std::int64_t workers) const;
};

struct CalmOptions {
  static OptionFields<CalmOptions> fields() { return {}; }
};
class Calm : public Churn {
 public:
  explicit Calm(CalmOptions) {}
  std::string name() const override { return "calm"; }
  const std::vector<ChurnEvent>& events() const override { return events_; }

 private:
  std::vector<ChurnEvent> events_;
};

struct ScriptOptions {
  std::string events;
  std::vector<ChurnEvent> parsed;  // not a field: `events` read
  static OptionFields<ScriptOptions> fields();
};
/// "leave 3 at 200; join 3 at 400": ranks (a comma list) leave or join before a global step.
class ScriptedChurn : public Churn {
 public:
  explicit ScriptedChurn(ScriptOptions options) : events_(std::move(options.parsed)) {}
  std::string name() const override { return "script"; }
  const std::vector<ChurnEvent>& events() const override { return events_; }

 private:
  std::vector<ChurnEvent> events_;
};

/// `leave { ranks = { 3 }, step = 200 }`, `join { ... }`: one change. A list of them is one
/// script (`churn = { leave { ... }, join { ... } }`, combine_churn_changes).
struct ChangeOptions {
  std::vector<std::int64_t> ranks;
  std::int64_t step = 0;
  JoinState state = JoinState::Copied;
  static OptionFields<ChangeOptions> fields();
};
template <bool Join>
class ChurnChange : public Churn {
 public:
  explicit ChurnChange(const ChangeOptions& options)
      : events_{ChurnEvent{Join, std::vector<int>(options.ranks.begin(), options.ranks.end()), options.step,
                           options.state}} {}
  std::string name() const override { return Join ? "join" : "leave"; }
  const std::vector<ChurnEvent>& events() const override { return events_; }

 private:
  std::vector<ChurnEvent> events_;
};

struct RandomChurnOptions {
  double leave_rate = 0.01;
  double mean_downtime = 20;
  std::int64_t seed = 0;
  JoinState state = JoinState::Copied;
  static OptionFields<RandomChurnOptions> fields();
};
/// Each worker but 0 present at a step (from step 1) leaves before it with probability
/// leave_rate, and comes back after a downtime drawn from the geometric distribution on 1, 2, ...
/// steps of mean mean_downtime; the draws come from `seed` (0: the run's seed, set by the catalog)
/// alone, so every rank and every replay of the run draws the same changes.
class RandomChurn : public Churn {
 public:
  explicit RandomChurn(RandomChurnOptions options) : options_(options) {}
  std::string name() const override { return "random"; }
  /// The changes drawn so far (events_through draws further).
  const std::vector<ChurnEvent>& events() const override { return events_; }
  const std::vector<ChurnEvent>& events_through(std::int64_t step, std::int64_t workers) const override;
  bool any_join(JoinState state, std::int64_t) const override { return options_.state == state; }

 private:
  RandomChurnOptions options_;
  mutable std::vector<ChurnEvent> events_;
  mutable std::vector<std::int64_t> back_at_;  // per rank: 0 present, else the step it comes back
  mutable std::int64_t drawn_ = 0;             // steps 1 .. drawn_ are drawn
};

/// "leave 3 at 200; join 3,5 at 400" (a join may end in "copied", "fresh" or "averaged") read; ConfigError naming `field` and the part that is
/// wrong.
std::vector<ChurnEvent> parse_churn_events(const std::string& field, const std::string& text);
/// The text parse_churn_events reads back.
std::string churn_events_text(const std::vector<ChurnEvent>& events);

/// The script that a list of leave { } and join { } stands for, its changes in step order (the
/// file's order within a step); ConfigError for anything else in the list, or an empty one.
ComponentSpec combine_churn_changes(const std::vector<ComponentSpec>& parts);

Registry<Churn> builtin_churn();

}  // namespace laconic::train
