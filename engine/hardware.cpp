#include "engine/hardware.hpp"

#include "engine/core/error.hpp"

namespace laconic::engine {

OptionFields<ProfileOptions> ProfileOptions::fields() {
  using O = ProfileOptions;
  return OptionFields<O>()
      .text("file", &O::file,
            "a hardware profile (JSON; scripts/profile-hardware.py writes one, docs/hardware.md), relative to the "
            "experiment file; part of the experiment's hash")
      .relative_to_file(/*hashed=*/true)
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.file.empty())
          throw ConfigError(
              str_cat(spec.name, ".file is required: the hardware profile's JSON file (docs/hardware.md)"));
        read_hardware_profile(o.file);  // a missing or malformed profile is refused with the experiment
      });
}

OptionFields<ByHandOptions> ByHandOptions::fields() {
  using O = ByHandOptions;
  return OptionFields<O>()
      .text("label", &O::label, "what the reports call this hardware (\"A100, by hand\")")
      .text("forward", &O::forward, "a step's forward pass there, for every run's model and batch size (\"3.1ms\")")
      .text("backward", &O::backward, "a step's backward pass there (\"6.2ms\")")
      .text("optimizer", &O::optimizer, "a step's optimizer update there (\"0.4ms\")")
      .text("compressors", &O::compressors,
            "a JSON file of compressor costs there (laconic_compress_cuda_bench --out, bench/compressor_costs.py; "
            "docs/hardware.md), relative to the experiment file, part of its hash; empty: only `none` is projected")
      .relative_to_file(/*hashed=*/true)
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.label.empty()) throw ConfigError(str_cat(spec.name, ".label is required: what the reports call it"));
        if (o.forward.empty() || o.backward.empty())
          throw ConfigError(str_cat(spec.name, ".forward and .backward are required: a step's seconds there"));
        hardware_profile_by_hand(o.recorded(), o.compressors);  // a bad duration or costs file is refused here
      });
}

nlohmann::json ByHandOptions::recorded() const {
  return {{"label", label}, {"forward", forward}, {"backward", backward}, {"optimizer", optimizer}};
}

Registry<Hardware> builtin_hardware() {
  Registry<Hardware> r("hardware");
  r.add<MeasuredHardware, MeasuredOptions>("measured", "no projection: reports give the times this machine measured");
  r.add<ProfileHardware, ProfileOptions>(
      "profile",
      "reports also project every run onto this hardware profile's compute and compressor costs, as laconic report "
      "--hardware does (docs/hardware.md)");
  r.add<ByHandHardware, ByHandOptions>(
      "by_hand",
      "reports also project every run onto a step's costs written here: forward, backward and optimizer seconds for "
      "every run's model, compressor costs from a file (docs/hardware.md)");
  return r;
}

}  // namespace laconic::engine
