#include "reports/hardware_step.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/error.hpp"
#include "reports/aggregate.hpp"

namespace laconic::reports {

double decoded_payloads_of(const RunData& run) {
  if (!std::isnan(run.decoded_payloads)) return run.decoded_payloads;
  return run.full_precision() ? 1.0 : static_cast<double>(run.run.workers);
}

HardwareStep hardware_step(const RunData& run, const HardwareProfile& profile, const LinkSpec& link) {
  HardwareStep step;
  if (std::isnan(run.model_parameters)) {
    step.missing = "the run recorded no model_parameters";
    return step;
  }
  const auto parameters = static_cast<std::int64_t>(run.model_parameters);
  const ModelStepCost* model = profile.model(run.run.model, run.run.batch_size, parameters);
  if (model == nullptr) {
    step.missing = str_cat("the profile has no ", run.run.model, " at batch ", run.run.batch_size, " with ", parameters,
                           " parameters (it has ", profile.models_text(), ")");
    return step;
  }
  const CompressorCost* codec = profile.compressor(run.run.compressor);
  if (codec == nullptr && !run.full_precision()) {
    step.missing = str_cat("the profile has no costs for compressor ", run.run.compressor);
    return step;
  }
  if (std::isnan(run.messages) || std::isnan(run.link_bytes)) {
    step.missing = "the run recorded no messages and link_bytes (an older laconic)";
    return step;
  }
  step.compute = model->compute();
  const auto n = static_cast<double>(parameters);
  step.codec =
      codec == nullptr ? 0 : codec->compress.seconds(n, 1) + codec->decompress.seconds(n, decoded_payloads_of(run));
  // diloco { overlap }: the inner steps the exchanges ran under take the profile's time.
  const double budget = run.overlap_budget * step.compute / run.compute;
  step.communicate = communicate_on_link(link, traffic_of(run), budget);
  if (!std::isnan(run.overlapped) && std::isnan(run.overlap_budget)) {
    // The exchange starts when the first bucket is ready and runs beside the rest of backward.
    const double start = model->ready_after(std::min(parameters, kFirstBucketElements));
    step.hidden = std::clamp(model->backward - start, 0.0, step.codec + step.communicate);
  }
  return step;
}

}  // namespace laconic::reports
