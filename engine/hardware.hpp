#pragma once
// The hardware an experiment's reports project its runs onto (the experiment field `hardware`;
// docs/hardware.md): `measured()`, the default, projects nothing (times as this machine measured
// them); `profile { file = "gpu.json" }` names a hardware profile, which `laconic report` then uses
// as it uses `--hardware`; `by_hand { label = ..., forward = "3.1ms", ... }` writes a step's costs
// in the experiment. Training never reads it: only the recorded configuration carries it.
#include <string>

#include "engine/core/hardware_profile.hpp"
#include "engine/core/option_fields.hpp"
#include "engine/core/registry.hpp"

namespace laconic::engine {

class Hardware {
 public:
  virtual ~Hardware() = default;
  virtual std::string name() const = 0;
  /// The profile reports project the runs onto; null: none (the times this machine measured).
  virtual const HardwareProfile* profile() const { return nullptr; }
};

struct MeasuredOptions {
  static OptionFields<MeasuredOptions> fields() { return {}; }
};

/// No projection: the times of this machine.
class MeasuredHardware : public Hardware {
 public:
  explicit MeasuredHardware(MeasuredOptions) {}
  std::string name() const override { return "measured"; }
};

struct ProfileOptions {
  std::string file;

  static OptionFields<ProfileOptions> fields();
};

/// A hardware profile's file, read (and so checked) when the experiment is.
class ProfileHardware : public Hardware {
 public:
  explicit ProfileHardware(ProfileOptions options) : profile_(read_hardware_profile(options.file)) {}
  std::string name() const override { return "profile"; }
  const HardwareProfile* profile() const override { return &profile_; }

 private:
  HardwareProfile profile_;
};

struct ByHandOptions {
  std::string label;
  std::string forward, backward, optimizer = "0s";
  std::string compressors;

  static OptionFields<ByHandOptions> fields();
  /// The fields as the run records them (what hardware_profile_by_hand reads back).
  nlohmann::json recorded() const;
};

/// A step's costs written in the experiment: the same forward, backward and optimizer seconds
/// for every run's model, and the compressors of a costs file, read (and so checked) when the
/// experiment is.
class ByHandHardware : public Hardware {
 public:
  explicit ByHandHardware(ByHandOptions options)
      : profile_(hardware_profile_by_hand(options.recorded(), options.compressors)) {}
  std::string name() const override { return "by_hand"; }
  const HardwareProfile* profile() const override { return &profile_; }

 private:
  HardwareProfile profile_;
};

Registry<Hardware> builtin_hardware();

}  // namespace laconic::engine
