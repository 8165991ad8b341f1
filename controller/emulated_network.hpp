#pragma once
// An emulated link (network = link { ..., emulate = true }): every rank of a run gets a network
// namespace of its own, joined by a veth pair to a bridge in a hub namespace. Each pair is shaped
// in both directions with tc's tbf at the link's bandwidth, so the ranks' Gloo traffic crosses a
// real bottleneck. The link's latency is netem's delay on each rank's egress where the kernel
// has netem, else it is added to every message by laconic's transport
// (Communicator::set_message_delay); the run records which. Only
// namespaces this controller creates are touched; deleting them removes every interface and
// qdisc in them. Linux, as root (or with CAP_NET_ADMIN and CAP_SYS_ADMIN), with iproute2.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/units.hpp"

namespace laconic::controller {

/// Namespaces are named laconic-net-PID-RUN-hub and laconic-net-PID-RUN-rRANK, PID the
/// controller's.
inline constexpr const char* kNamespacePrefix = "laconic-net-";

/// Where a rank of an emulated link lives.
struct EmulatedRank {
  std::string netns;    ///< the namespace's name (/run/netns/NAME)
  std::string address;  ///< its IPv4 address there, for Gloo to listen on
};

/// How a link of `rate` bit/s is cut for tbf. tbf passes a packet at once when its bucket holds
/// the packet's bytes, so a message of a bucket or less crosses at the host's speed, and the last
/// packet of any message leaves before the wire would have carried it: the emulation is within
/// one bucket of the link. The bucket is 200 us of the link, at least three 1514-byte frames (363
/// us at 100 Mbit/s), and the packets the ranks' TCP hands the device (GSO's segments travel
/// through veth as one packet up to 64 kB) are capped at half of it, at least two frames (TCP's
/// fewest segments a packet), so tbf never has to cut one. docs/network-model.md has the
/// measurements.
struct LinkShaping {
  std::uint64_t burst = 0;         ///< tbf's bucket, bytes
  std::uint64_t gso_max_size = 0;  ///< the rank's device's largest packet from TCP, bytes
};
LinkShaping link_shaping(std::uint64_t rate);

/// Islands of an emulated cluster (network = cluster { emulate = true }): each rank's island,
/// and the link from each island to the others.
struct EmulatedIslands {
  std::vector<int> island_of_rank;
  double bits_per_second = 0;
  double latency_seconds = 0;  ///< added per message by laconic's transport, never by netem
};

class EmulatedNetwork {
 public:
  /// Builds the namespaces of `ranks` ranks (at most 250) for run `run_id`, each rank's link
  /// shaped to `bits_per_second` per direction, and `latency_seconds` one way by netem where
  /// the kernel has it (latency_by_netem()). A `trace` (link { trace }) is replayed from
  /// start_trace() on: packets are cut for its slowest rate. Throws std::runtime_error naming the
  /// command that failed and what it printed, or a trace that changes the latency where the
  /// kernel has no netem; what was built by then is torn down.
  /// With `islands`, the ranks' ports join a bridge per island, and each island's bridge a core
  /// bridge through a link shaped both ways to `islands->bits_per_second` (the rank's own link is
  /// then the one inside an island); latencies are never netem's then, as they depend on the peer.
  EmulatedNetwork(std::int64_t run_id, int ranks, double bits_per_second, double latency_seconds,
                  std::vector<LinkChange> trace = {}, std::optional<EmulatedIslands> islands = std::nullopt);
  /// Stops the trace's replay and deletes the run's namespaces (and with them the veth pairs, the
  /// bridge and the qdiscs).
  ~EmulatedNetwork();
  EmulatedNetwork(const EmulatedNetwork&) = delete;
  EmulatedNetwork& operator=(const EmulatedNetwork&) = delete;

  const EmulatedRank& rank(int r) const { return ranks_.at(static_cast<std::size_t>(r)); }
  /// The namespaces, hub first.
  std::vector<std::string> namespaces() const;
  /// True when netem delays every packet a rank sends by the latency; false when the kernel
  /// has no netem (or the latency is 0), and laconic's transport must delay each message.
  bool latency_by_netem() const { return netem_; }
  /// What was built, for run_facts: "veth pairs to a bridge, ... tbf at 100000000 bit/s per
  /// direction, a bucket of 4542 bytes, packets of at most 3028 bytes; latency ...", naming how
  /// the latency is made.
  std::string description() const;

  /// Starts replaying the trace: at each change's time from now, every rank's tbf (both ways) is
  /// changed to its rate with `tc qdisc change`, and netem's delay to its latency. No-op without a
  /// trace.
  void start_trace();
  /// What the replay did: "at 30.004 s: 10000000 bit/s; ..." with when each change took effect,
  /// or why one failed; "" without a trace.
  std::string trace_log() const;

 private:
  void tear_down() noexcept;
  std::string bridge_of(int r) const;
  void ensure_bridge(const std::string& name);
  void build_rank(int r, double latency_seconds);
  void build_uplinks();
  void stop_trace() noexcept;
  void replay(std::chrono::steady_clock::time_point start);
  void apply(const LinkChange& change);

  std::string hub_;
  std::vector<EmulatedRank> ranks_;
  double bits_per_second_;
  double latency_seconds_;
  LinkShaping shaping_;
  bool netem_ = false;
  std::vector<LinkChange> trace_;
  std::optional<EmulatedIslands> islands_;
  std::vector<std::string> bridges_;
  std::thread replay_;
  mutable std::mutex mutex_;
  std::condition_variable stopping_;
  bool stop_ = false;
  std::string trace_log_;
};

/// The tc arguments that shape a rank's egress on `dev` in namespace `ns`: tbf at `rate` bit/s
/// with a bucket of `burst` bytes, under netem's delay of `delay_us` microseconds when given
/// (netem as root, tbf its child, as netem's documentation pairs them). One command line each.
std::vector<std::vector<std::string>> egress_shaping(const std::string& ns, const std::string& dev, std::uint64_t rate,
                                                     std::uint64_t burst, std::optional<std::uint64_t> delay_us);

/// Why emulated links cannot be built on this machine, or "" when they can: the process lacks
/// root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), `ip` or `tc` (iproute2) is missing, or creating a
/// network namespace (tried, then deleted) fails.
std::string why_no_emulation();

/// Deletes the namespaces of controllers that are gone (killed before they could); returns
/// their names.
std::vector<std::string> remove_stale_namespaces();

/// Moves the calling thread into the network namespace `name`; threads it starts afterwards
/// (Gloo's) are there too. Throws std::runtime_error when it cannot.
void join_namespace(const std::string& name);

}  // namespace laconic::controller
