#include "engine/comm/network.hpp"

#include "engine/core/error.hpp"

namespace laconic::comm {
std::vector<FieldSpec> LinkOptions::fields() {
  return {
      {"bandwidth", FieldType::String, std::string("1Gbit"),
       "rate per direction (full duplex): \"10Gbit\", \"100Mbit/s\", \"125MB/s\""},
      {"latency", FieldType::String, std::string("50us"),
       "one-way latency per message: \"50us\", \"0.2ms\""},
      {"emulate", FieldType::Bool, false,
       "run the ranks on this link for real: each in a network namespace of its own, joined by "
       "veth pairs shaped with tc tbf to the bandwidth, the latency added to every message by "
       "laconic's transport (needs root or CAP_NET_ADMIN + CAP_SYS_ADMIN, and iproute2)"},
  };
}

LinkOptions LinkOptions::from(const ComponentSpec& spec) {
  LinkOptions o;
  o.bandwidth = spec.text("bandwidth");
  o.latency = spec.text("latency");
  o.bits_per_second = parse_bandwidth("link.bandwidth", o.bandwidth);
  o.latency_seconds = parse_duration("link.latency", o.latency);
  o.emulate = spec.flag("emulate");
  return o;
}

double Link::project(const ByteCounters& delta) const {
  const LinkSpec link{"", options_.bits_per_second, options_.latency_seconds};
  return link.project(static_cast<double>(delta.messages), static_cast<double>(delta.link_bytes));
}

Registry<NetworkModel> builtin_networks() {
  Registry<NetworkModel> r("network");
  r.add<Link, LinkOptions>("link", "a full-duplex link of given bandwidth and latency per "
                                   "worker; projects each message as latency + size / bandwidth");
  return r;
}

}  // namespace laconic::comm
