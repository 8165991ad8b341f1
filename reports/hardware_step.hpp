#pragma once
// A recorded run's step projected onto other hardware (laconic report --hardware): compute from
// the hardware profile, compression from its per-element costs, and the messages the run
// recorded on a link; for an overlapped exchange, what backward can hide, and under diloco {
// overlap }, what the inner steps it ran under hide at the profile's compute (docs/hardware.md).
// The accuracy side of the run (the steps it needed) is kept as it was measured.
#include <string>

#include "engine/core/hardware_profile.hpp"
#include "engine/core/units.hpp"
#include "reports/run_data.hpp"

namespace laconic::reports {

/// The parts of a projected step, s per step and worker.
struct HardwareStep {
  double compute = kNaN;      ///< forward + backward + optimizer, the profile's
  double codec = kNaN;        ///< compress + decoding of the payloads, the profile's costs
  double communicate = kNaN;  ///< the run's messages and link bytes on the link
  /// Of codec + communicate, what runs while backward is still going (an overlapped exchange
  /// starts once its first bucket is ready); 0 for an exchange after backward.
  double hidden = 0;
  /// Why the step cannot be projected ("the profile has no lenet5 at batch 64 with 61706
  /// parameters; it has ..."); empty when it can.
  std::string missing;

  double total() const { return missing.empty() ? compute + codec + communicate - hidden : kNaN; }
};

/// `run` on `profile`'s hardware and on `link`.
HardwareStep hardware_step(const RunData& run, const HardwareProfile& profile, const LinkSpec& link);

/// Payloads the run decoded per compressed gradient: its decoded_payloads, or for runs recorded
/// before laconic stored it, 1 for a full-precision exchange (RunData::full_precision) and the
/// workers' count for any other.
double decoded_payloads_of(const RunData& run);

/// The first bucket of an overlapped exchange (allreduce { overlap = true }): 1 MiB of fp32
/// gradient, DDP's and laconic's default (topology::Bucketing).
inline constexpr std::int64_t kFirstBucketElements = (1 << 20) / 4;

}  // namespace laconic::reports
