#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/component.hpp"
#include "engine/schedule/schedule.hpp"

namespace laconic::schedule {

struct LocalSgdOptions {
  std::int64_t period = 4;  ///< local steps between model averages (H), >= 1

  static std::vector<FieldSpec> fields();
  static LocalSgdOptions from(const ComponentSpec& spec);
};

/// Local SGD (Stich 2019; "periodic averaging"): every worker takes `period` optimizer steps on
/// its own gradients, then the models are averaged (the change since the last average goes
/// through the compressor and the topology, like a gradient). With period 1 and plain SGD
/// (momentum included, as it is linear) it is synchronous SGD.
class LocalSgdSchedule : public Schedule {
 public:
  explicit LocalSgdSchedule(LocalSgdOptions options) : options_(options) {}
  std::string name() const override { return "local_sgd"; }
  void step(StepActions& actions, std::int64_t step) override;

 private:
  LocalSgdOptions options_;
};

}  // namespace laconic::schedule
