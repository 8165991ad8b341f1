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

/// One change: `ranks` leave (or join) before global step `step`.
struct ChurnEvent {
  bool join = false;
  std::vector<int> ranks;
  std::int64_t step = 0;
  bool operator==(const ChurnEvent&) const = default;
};

class Churn {
 public:
  virtual ~Churn() = default;
  virtual std::string name() const = 0;
  /// Its changes in step order.
  virtual const std::vector<ChurnEvent>& events() const = 0;
  /// The workers (of `workers`) present at global step `step`, in rank order.
  std::vector<int> present(std::int64_t step, std::int64_t workers) const;
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

/// "leave 3 at 200; join 3,5 at 400" read; ConfigError naming `field` and the part that is wrong.
std::vector<ChurnEvent> parse_churn_events(const std::string& field, const std::string& text);

Registry<Churn> builtin_churn();

}  // namespace laconic::train
