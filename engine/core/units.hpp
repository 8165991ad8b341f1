#pragma once
// Rates and durations as experiment files and the command line write them, and a link to
// project traffic onto (engine/comm/network.hpp has the experiment's own; reports project stored
// runs onto others).
#include <optional>
#include <string>
#include <vector>

namespace laconic {

/// "1Gbit", "100 Mbit/s", "125MB/s": bit, Kbit, Mbit, Gbit, Tbit (powers of 1000) or B, KB, MB,
/// GB, TB (bytes, powers of 1000), each optionally followed by "/s"; returns bits per second.
/// ConfigError naming `field` otherwise.
double parse_bandwidth(const std::string& field, const std::string& text);

/// "50us", "0.2 ms", "1s", "800ns", "6m", "15min", "1h"; returns seconds. ConfigError naming
/// `field` otherwise. Every duration laconic reads goes through it.
double parse_duration(const std::string& field, const std::string& text);

/// The share of a TCP link's bytes that is payload: a 1500-byte MTU carries 1448 bytes of
/// payload in a 1514-byte Ethernet frame (14 bytes Ethernet, 20 IPv4, 32 TCP with timestamps),
/// and the same direction carries the ACKs of the other direction's data, a 66-byte frame per
/// two segments (delayed ACK): 1448 / (1514 + 33).
inline constexpr double kTcpPayloadFraction = 1448.0 / 1547.0;

/// A change of a link during a run (link { trace = "bw.csv" }): from `at_seconds` of the run's
/// time on, the link carries `bits_per_second` and, where given, `latency_seconds` (else its own).
struct LinkChange {
  double at_seconds = 0;
  double bits_per_second = 0;
  std::optional<double> latency_seconds;
  bool operator==(const LinkChange&) const = default;
};

/// A link to project traffic onto. Each message costs the link's latency plus the host's own
/// overhead per message (the sender's and receiver's system calls, copies and scheduling: 0 for
/// the link alone), and its bytes move at the link's payload rate (rate x payload_fraction), or
/// at the host's where the host cannot keep up with the link (host_bits_per_second; 0: no such
/// limit). docs/network-model.md.
struct LinkSpec {
  std::string text;  ///< as given
  double bits_per_second = 1e9;
  double latency_seconds = 50e-6;
  double overhead_seconds = 0;      ///< per message, on the hosts
  double host_bits_per_second = 0;  ///< the hosts' own limit on a message's rate; 0: none
  double payload_fraction = kTcpPayloadFraction;
  /// The text named the latency; parse_link of a bandwidth alone leaves it false (and the
  /// default latency), so that a report can take the runs' own latency instead.
  bool latency_given = true;
  /// Its changes in time order, the rate and latency above holding before the first; empty for
  /// a link that does not change.
  std::vector<LinkChange> trace;
  /// messages x (latency + overhead) + 8 x link_bytes / min(rate x payload_fraction, host rate).
  double project(double messages, double link_bytes) const;
  /// The same for traffic that starts at `seconds` of the run's time on a link that changes: the
  /// messages' latency as it stands then, and the bytes carried at each rate in turn from there on.
  double project_at(double seconds, double messages, double link_bytes) const;
  /// The link as it stands at `seconds` (its trace applied, and left out of the result).
  LinkSpec at(double seconds) const;
  /// The bytes' rate in bit/s: rate x payload_fraction, or the host's where it is lower.
  double payload_rate() const;
  bool operator==(const LinkSpec&) const = default;
};

/// A link given as "BANDWIDTH[,LATENCY[,OVERHEAD[,HOST_BANDWIDTH]]]" ("100Mbit", "1Gbit,50us",
/// "10Gbit,50us,300us,3Gbit"); the latency defaults to 50 us, as `link`'s does, the overhead to 0
/// and the host bandwidth to none. ConfigError naming the part that is wrong.
LinkSpec parse_link(const std::string& text);

}  // namespace laconic
