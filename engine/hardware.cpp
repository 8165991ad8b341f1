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

Registry<Hardware> builtin_hardware() {
  Registry<Hardware> r("hardware");
  r.add<MeasuredHardware, MeasuredOptions>("measured", "no projection: reports give the times this machine measured");
  r.add<ProfileHardware, ProfileOptions>(
      "profile",
      "reports also project every run onto this hardware profile's compute and compressor costs, as laconic report "
      "--hardware does (docs/hardware.md)");
  return r;
}

}  // namespace laconic::engine
