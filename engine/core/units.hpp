#pragma once
// Rates and durations as experiment files and the command line write them, and a link to
// project traffic onto (engine/comm/network.hpp has the experiment's own; reports project stored
// runs onto others).
#include <string>

namespace laconic {

/// "1Gbit", "100 Mbit/s", "125MB/s": bit, Kbit, Mbit, Gbit, Tbit (powers of 1000) or B, KB, MB,
/// GB, TB (bytes, powers of 1000), each optionally followed by "/s"; returns bits per second.
/// ConfigError naming `field` otherwise.
double parse_bandwidth(const std::string& field, const std::string& text);

/// "50us", "0.2 ms", "1s", "800ns"; returns seconds. ConfigError naming `field` otherwise.
double parse_duration(const std::string& field, const std::string& text);

/// A link given as "BANDWIDTH" or "BANDWIDTH,LATENCY" ("100Mbit", "1Gbit,50us"); the latency
/// defaults to 50 us, as `link`'s does.
struct LinkSpec {
  std::string text;  ///< as given
  double bits_per_second = 1e9;
  double latency_seconds = 50e-6;
  /// The alpha-beta model (docs/network-model.md): messages x latency + 8 x link_bytes / rate.
  double project(double messages, double link_bytes) const;
};

/// ConfigError naming the part that is wrong.
LinkSpec parse_link(const std::string& text);

}  // namespace laconic
