#pragma once
#include <cstdint>

#include "engine/core/option_fields.hpp"
#include "engine/schedule/schedule.hpp"

namespace laconic::schedule {

/// OpenDiLoCo's outer optimizer (Jaghouar et al. 2024): SGD with Nesterov momentum.
ComponentSpec default_outer_optimizer();

struct DilocoOptions {
  StepValue inner_steps = 100;
  ComponentSpec outer = default_outer_optimizer();

  static OptionFields<DilocoOptions> fields();
  static ScheduleTraits traits(const DilocoOptions& options) {
    return {.staleness_bound = std::nullopt,
            .averages_models = true,
            .outer_optimizer = options.outer,
            .exchanges_each_gradient = false};
  }
  static std::string why_not_update_exchange(const ComponentSpec&) {
    return "DiLoCo already exchanges what its inner steps changed in the model, its pseudo-gradient";
  }
};

/// DiLoCo (Douillard et al. 2023, arXiv 2311.08105): every worker takes `inner_steps` (H) steps
/// of the experiment's optimizer (the inner one, its state kept per worker across rounds), then
/// the workers average their change since the round's start through the compressor and the
/// topology, and the outer optimizer steps the shared weights with the pseudo-gradient (start
/// minus the averaged local weights); every worker starts the next round from them. With outer
/// sgd { lr = 1 } it is local_sgd { period = H }, bit for bit. Counts H like local SGD counts its
/// period: asked after every inner step when it is a function.
class DilocoSchedule : public Schedule {
 public:
  explicit DilocoSchedule(DilocoOptions options) : Schedule(DilocoOptions::traits(options)), options_(options) {}
  std::string name() const override { return "diloco"; }
  void step(StepActions& actions, const StepPoint& at) override;
  void save_state(StateWriter& out) const override { out.i64(since_round_); }
  void load_state(StateReader& in) override { since_round_ = in.i64(); }

 private:
  DilocoOptions options_;
  std::int64_t since_round_ = 0;  // inner steps since the round began
};

}  // namespace laconic::schedule
