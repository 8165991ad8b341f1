#include "engine/comm/network.hpp"

#include "engine/comm/link_trace.hpp"
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
      .text("trace", &O::trace,
            "a CSV of the link's changes during the run, TIME,BANDWIDTH[,LATENCY] a line (\"60s,100Mbit\"), replayed "
            "in the projection at each rank's time since the run started and by tc on an emulated link; relative to "
            "the experiment file, part of its hash; \"\" for a link that does not change (docs/network-model.md)")
      .relative_to_file(/*hashed=*/true)
      .rule([](const ComponentSpec& spec, O& o) {
        const auto field = [&](const char* name) { return str_cat(spec.name, ".", name); };
        o.bits_per_second = parse_bandwidth(field("bandwidth"), o.bandwidth);
        o.latency_seconds = parse_duration(field("latency"), o.latency);
        o.overhead_seconds = parse_duration(field("overhead"), o.overhead);
        if (!o.host_bandwidth.empty())
          o.host_bits_per_second = parse_bandwidth(field("host_bandwidth"), o.host_bandwidth);
        if (!o.trace.empty()) o.changes = read_link_trace(o.trace);
      });
}

Link::Link(LinkOptions options)
    : options_(std::move(options)),
      spec_{options_.bandwidth,           options_.bits_per_second,      options_.latency_seconds,
            options_.overhead_seconds,    options_.host_bits_per_second, options_.payload_fraction,
            true,                         options_.changes} {}

double Link::project(const ByteCounters& delta) const {
  return spec_.project_at(clock(), static_cast<double>(delta.messages), static_cast<double>(delta.link_bytes));
}

OptionFields<ClusterOptions> ClusterOptions::fields() {
  using O = ClusterOptions;
  return OptionFields<O>()
      .integers("islands", &O::islands,
                "ranks per island, in rank order: { 4, 4 } puts ranks 0-3 in one island and 4-7 in the other; they "
                "must add up to the ranks of the run")
      .flag("emulate", &O::emulate,
            "run the ranks on these islands for real: a network namespace per rank, a bridge per island, each rank's "
            "link shaped with tc tbf to inside's bandwidth, each island's link out to the others to between's; the "
            "latencies added per message by laconic's transport (root or CAP_NET_ADMIN + CAP_SYS_ADMIN, iproute2)")
      .component_of("network", "inside", &O::inside, "the link between two ranks of one island: a link { }")
      .component_of("network", "between", &O::between, "the link between ranks of different islands: a link { }")
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.islands.empty())
          throw ConfigError(str_cat(spec.name, ".islands must list the ranks of each island, e.g. { 4, 4 }"));
        for (std::int64_t n : o.islands)
          if (n < 1) throw ConfigError(str_cat(spec.name, ".islands must be >= 1 each, got ", n));
      });
}

namespace {

// A cluster's link: a `link { }` (a cluster of clusters is not a model), projected only.
LinkSpec cluster_link(const ComponentSpec& spec, const char* field) {
  const auto model = builtin_networks().create(spec);
  if (!model->link())
    throw ConfigError(str_cat("cluster.", field, " must be a link { }, got ", spec.name, " { }"));
  if (model->emulated() != nullptr)
    throw ConfigError(str_cat("cluster.", field, " { emulate = true }: a cluster is emulated as a whole, with "
                              "cluster { emulate = true, ... } (a bridge per island, a shaped link between)"));
  return *model->link();
}

}  // namespace

Cluster::Cluster(ClusterOptions options)
    : sizes_(std::move(options.islands)),
      inside_(cluster_link(options.inside, "inside")),
      between_(cluster_link(options.between, "between")),
      emulate_(options.emulate) {
  if (emulate_ && !(inside_.trace.empty() && between_.trace.empty()))
    throw ConfigError("cluster { emulate = true }: a link's trace is replayed on an emulated link { } only, not yet "
                      "on emulated islands; project the islands (emulate = false) to follow it");
}

double Cluster::project(const ByteCounters& delta) const {
  return inside_.project_at(clock(), static_cast<double>(delta.messages - delta.between_messages),
                            static_cast<double>(delta.link_bytes - delta.between_link_bytes)) +
         between_.project_at(clock(), static_cast<double>(delta.between_messages),
                             static_cast<double>(delta.between_shared_bytes));
}

std::vector<int> Cluster::islands(int world) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < sizes_.size(); ++i) out.insert(out.end(), static_cast<std::size_t>(sizes_[i]), static_cast<int>(i));
  if (static_cast<int>(out.size()) != world)
    throw ConfigError(str_cat("network = cluster { islands } holds ", out.size(), " ranks, the run has ", world,
                              " (its workers, and a parameter server's ranks)"));
  return out;
}

Registry<NetworkModel> builtin_networks() {
  Registry<NetworkModel> r("network");
  r.add<Link, LinkOptions>("link",
                           "a full-duplex link of given bandwidth and latency per "
                           "worker; projects each message as latency + overhead + size / "
                           "bandwidth");
  r.add<Cluster, ClusterOptions>("cluster",
                                 "islands of ranks joined by a slower link: each message projected onto the link it "
                                 "crosses, a collective's phase onto its slowest");
  return r;
}

}  // namespace laconic::comm
