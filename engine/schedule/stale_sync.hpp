#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/schedule/schedule.hpp"

namespace laconic::schedule {

/// Why the asynchronous schedules cannot exchange updates.
inline constexpr const char* kServerSteps =
    "the parameter server applies each worker's push with its own optimizer as it arrives";

struct StaleSyncOptions {
  std::int64_t staleness = 2;

  static OptionFields<StaleSyncOptions> fields();
  static ScheduleTraits traits(const StaleSyncOptions& o) { return {.staleness_bound = o.staleness}; }
  static std::string why_not_update_exchange(const ComponentSpec&) { return kServerSteps; }
};

/// Stale-synchronous parallel SGD (Ho et al. 2013) with a parameter server: each worker
/// computes, pushes, and pulls the server's current weights; the server applies every push on
/// its own and holds a worker's reply while it is more than `staleness` steps ahead of the
/// slowest. staleness = 0 is lock-step with individual updates.
class StaleSyncSchedule : public Schedule {
 public:
  explicit StaleSyncSchedule(StaleSyncOptions options)
      : Schedule(StaleSyncOptions::traits(options)), options_(options) {}
  std::string name() const override { return "stale_sync"; }
  void step(StepActions& actions, const StepPoint& at) override;

 private:
  StaleSyncOptions options_;
};

struct AsyncOptions {
  static OptionFields<AsyncOptions> fields() { return {}; }
  /// No bound: a very large one.
  static ScheduleTraits traits(const AsyncOptions&) {
    return {.staleness_bound = std::numeric_limits<std::int64_t>::max() / 2};
  }
  static std::string why_not_update_exchange(const ComponentSpec&) { return kServerSteps; }
};

/// Asynchronous SGD with a parameter server (Dean et al. 2012, "Downpour"): no bound; the
/// server applies each push as it arrives and replies at once.
class AsyncSchedule : public Schedule {
 public:
  explicit AsyncSchedule(AsyncOptions options) : Schedule(AsyncOptions::traits(options)) {}
  std::string name() const override { return "async"; }
  void step(StepActions& actions, const StepPoint& at) override;
};

}  // namespace laconic::schedule
