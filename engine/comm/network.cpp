#include "engine/comm/network.hpp"

#include "engine/core/error.hpp"

namespace laconic::comm {
OptionFields<LinkOptions> LinkOptions::fields() {
  using O = LinkOptions;
  return OptionFields<O>()
      .text("bandwidth", &O::bandwidth, "rate per direction (full duplex): \"10Gbit\", \"100Mbit/s\", \"125MB/s\"")
      .text("latency", &O::latency, "one-way latency per message: \"50us\", \"0.2ms\"")
      .flag("emulate", &O::emulate,
            "run the ranks on this link for real: each in a network namespace of its own, joined by veth pairs "
            "shaped with tc tbf to the bandwidth, the latency by netem where the kernel has it, else added to every "
            "message by laconic's transport (needs root or CAP_NET_ADMIN + CAP_SYS_ADMIN, and iproute2)")
      .text("overhead", &O::overhead,
            "the hosts' own cost per message (system calls, copies, scheduling), added to the latency in "
            "projections; 0 projects the link alone (docs/network-model.md: this machine's figures)")
      .text("host_bandwidth", &O::host_bandwidth,
            "the hosts' own limit on a message's rate, where it is below the link's: \"3Gbit\"; \"\" for none")
      .number("payload_fraction", &O::payload_fraction,
              "share of the link's bytes that is payload: TCP over Ethernet with a 1500-byte MTU, 1448 / (1514 + 33 "
              "of ACKs) = 0.936; 1 for a link that carries payload alone",
              open_closed(0, 1))
      .rule([](const ComponentSpec& spec, O& o) {
        const auto field = [&](const char* name) { return str_cat(spec.name, ".", name); };
        o.bits_per_second = parse_bandwidth(field("bandwidth"), o.bandwidth);
        o.latency_seconds = parse_duration(field("latency"), o.latency);
        o.overhead_seconds = parse_duration(field("overhead"), o.overhead);
        if (!o.host_bandwidth.empty())
          o.host_bits_per_second = parse_bandwidth(field("host_bandwidth"), o.host_bandwidth);
      });
}

Link::Link(LinkOptions options)
    : options_(std::move(options)),
      spec_{options_.bandwidth,           options_.bits_per_second,      options_.latency_seconds,
            options_.overhead_seconds,    options_.host_bits_per_second, options_.payload_fraction} {}

double Link::project(const ByteCounters& delta) const {
  return spec_.project(static_cast<double>(delta.messages), static_cast<double>(delta.link_bytes));
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
