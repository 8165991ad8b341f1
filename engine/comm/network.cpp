#include "engine/comm/network.hpp"

#include "engine/core/error.hpp"

namespace laconic::comm {
std::vector<FieldSpec> LinkOptions::fields() {
  return {
      {"bandwidth", FieldType::String, std::string("1Gbit"),
       "rate per direction (full duplex): \"10Gbit\", \"100Mbit/s\", \"125MB/s\""},
      {"latency", FieldType::String, std::string("50us"), "one-way latency per message: \"50us\", \"0.2ms\""},
      {"emulate", FieldType::Bool, false,
       "run the ranks on this link for real: each in a network namespace of its own, joined by "
       "veth pairs shaped with tc tbf to the bandwidth, the latency by netem where the kernel has "
       "it, else added to every message by laconic's transport (needs root or CAP_NET_ADMIN + "
       "CAP_SYS_ADMIN, and iproute2)"},
      {"overhead", FieldType::String, std::string("0us"),
       "the hosts' own cost per message (system calls, copies, scheduling), added to the latency "
       "in projections; 0 projects the link alone (docs/network-model.md: this machine's figures)"},
      {"host_bandwidth", FieldType::String, std::string(""),
       "the hosts' own limit on a message's rate, where it is below the link's: \"3Gbit\"; "
       "\"\" for none"},
      {"payload_fraction", FieldType::Number, kTcpPayloadFraction,
       "share of the link's bytes that is payload: TCP over Ethernet with a 1500-byte MTU, "
       "1448 / (1514 + 33 of ACKs) = 0.936; 1 for a link that carries payload alone"},
  };
}

LinkOptions LinkOptions::from(const ComponentSpec& spec) {
  LinkOptions o;
  o.bandwidth = spec.text("bandwidth");
  o.latency = spec.text("latency");
  o.bits_per_second = parse_bandwidth("link.bandwidth", o.bandwidth);
  o.latency_seconds = parse_duration("link.latency", o.latency);
  o.emulate = spec.flag("emulate");
  o.overhead = spec.text("overhead");
  o.overhead_seconds = parse_duration("link.overhead", o.overhead);
  o.host_bandwidth = spec.text("host_bandwidth");
  if (!o.host_bandwidth.empty()) o.host_bits_per_second = parse_bandwidth("link.host_bandwidth", o.host_bandwidth);
  o.payload_fraction = spec.number("payload_fraction");
  if (!(o.payload_fraction > 0 && o.payload_fraction <= 1))
    throw ConfigError(str_cat("link.payload_fraction must be in (0, 1], got ", o.payload_fraction));
  return o;
}

double Link::project(const ByteCounters& delta) const {
  const LinkSpec link{"",
                      options_.bits_per_second,
                      options_.latency_seconds,
                      options_.overhead_seconds,
                      options_.host_bits_per_second,
                      options_.payload_fraction};
  return link.project(static_cast<double>(delta.messages), static_cast<double>(delta.link_bytes));
}

Registry<NetworkModel> builtin_networks() {
  Registry<NetworkModel> r("network");
  r.add<Link, LinkOptions>("link",
                           "a full-duplex link of given bandwidth and latency per "
                           "worker; projects each message as latency + overhead + size / "
                           "bandwidth");
  return r;
}

}  // namespace laconic::comm
