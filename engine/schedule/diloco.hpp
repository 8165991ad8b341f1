#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/schedule/schedule.hpp"

namespace laconic::schedule {

/// OpenDiLoCo's outer optimizer (Jaghouar et al. 2024): SGD with Nesterov momentum.
ComponentSpec default_outer_optimizer();

struct DilocoOptions {
  StepValue inner_steps = 100;
  ComponentSpec outer = default_outer_optimizer();
  std::int64_t fragments = 1;
  std::int64_t overlap = 0;
  double alpha = 0;
  bool islands = false;
  JoinPolicy join = JoinPolicy::NextRound;

  static OptionFields<DilocoOptions> fields();
  static ScheduleTraits traits(const DilocoOptions& options) {
    return {.staleness_bound = std::nullopt,
            .averages_models = true,
            .outer_optimizer = options.outer,
            .fragments = options.fragments,
            .streaming = options.streams(),
            .overlap = options.overlap,
            .exchanges_each_gradient = false,
            .synchronous_islands = options.islands};
  }
  /// Averaged fragment by fragment: more than one fragment, an overlap or a mixing factor.
  bool streams() const { return fragments > 1 || overlap > 0 || alpha > 0; }
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
/// Streaming DiLoCo (Douillard et al. 2025, arXiv 2501.18512), `fragments` = F > 1: the model's
/// layers are cut into F fragments of about equal size; fragment f's rounds end H - f H / F
/// steps after the start and every H steps after, so the fragments are averaged on staggered
/// steps and each exchange carries about 1/F of the model (H is then a constant, >= F).
/// `overlap` = tau > 0: a fragment's exchange runs under the next tau inner steps and its
/// outer-stepped weights are applied after them, mixed with the local ones by `alpha` (local =
/// alpha local + (1 - alpha) shared). Here the exchange runs when it is launched and the
/// overlap is modelled in the projections: its communication counts only where it is longer
/// than the tau steps' compute (docs/topologies.md).
class DilocoSchedule : public Schedule {
 public:
  explicit DilocoSchedule(DilocoOptions options);
  std::string name() const override { return "diloco"; }
  void step(StepActions& actions, const StepPoint& at) override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;
  /// With churn, whole-model rounds only (the catalog refuses fragments and overlap).
  void pass(const StepPoint& at) override;
  bool round_starts() const override { return since_round_.front() == 0; }
  bool admits_joiners() const override { return options_.join == JoinPolicy::Now || round_starts(); }

 private:
  /// Averages fragment f of the model (or the whole of it), applying it now or tau steps on.
  void end_round(StepActions& actions, int fragment, const StepPoint& at);

  DilocoOptions options_;
  std::vector<std::int64_t> since_round_;   // per fragment: inner steps since its round began
  std::vector<std::int64_t> until_applied_;  // per fragment: steps before its exchange applies, 0 = none
};

}  // namespace laconic::schedule
