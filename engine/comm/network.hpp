#pragma once
// The network model: projects the traffic a worker really sent over loopback onto a named link,
// message by message (latency + size / bandwidth), following the collective's real pattern.
#include <optional>
#include <string>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "engine/core/option_fields.hpp"
#include "engine/core/registry.hpp"
#include "engine/core/resolved_run.hpp"
#include "engine/core/units.hpp"

namespace laconic::comm {

// parse_bandwidth and parse_duration live in engine/core/units.hpp.
using laconic::parse_bandwidth;
using laconic::parse_duration;

struct LinkOptions {
  std::string bandwidth = "1Gbit";
  std::string latency = "50us";
  bool emulate = false;  // the controller builds this link for real (controller/emulated_network.hpp)
  std::string overhead = "0us";
  std::string host_bandwidth = "";
  double payload_fraction = kTcpPayloadFraction;
  std::string trace = "";  // a CSV of the link's changes (engine/comm/link_trace.hpp); "": none
  // Not fields: the texts above as numbers, set when the spec is read.
  double bits_per_second = 1e9;
  double latency_seconds = 50e-6;
  double overhead_seconds = 0;
  double host_bits_per_second = 0;  // 0: none
  std::vector<LinkChange> changes;  // the trace's

  static OptionFields<LinkOptions> fields();
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual std::string name() const = 0;
  /// Seconds the traffic `delta` (this worker's counters over one step) would take on the
  /// modelled network, starting at the clock's time.
  virtual double project(const ByteCounters& delta) const = 0;
  /// The run's time the traffic projected next starts at, for a link that changes (a trace): the
  /// rank's own time since the run started (a row's `wall`), which the worker sets before each
  /// step.
  void set_clock(double seconds) { clock_ = seconds; }
  double clock() const { return clock_; }
  /// The link it models, for reports to name and project onto; nothing for a model that is not
  /// one link.
  virtual std::optional<LinkSpec> link() const { return std::nullopt; }
  /// The link the controller is to build for real (controller/emulated_network.hpp); null: none.
  virtual const LinkOptions* emulated() const { return nullptr; }
  /// The controller builds this network for real: an emulated link, or emulated islands.
  virtual bool emulates() const { return emulated() != nullptr; }
  /// A cluster's islands and links; nothing for a model of one link.
  virtual std::optional<ResolvedIslands> resolved_islands() const { return std::nullopt; }
  /// The island of each of `world` ranks (Communicator::set_islands), or empty for a model with
  /// one link between all. ConfigError when the model's islands do not hold `world` ranks.
  virtual std::vector<int> islands(int world) const {
    (void)world;
    return {};
  }

 private:
  double clock_ = 0;
};

/// One full-duplex link per worker: each send_recv costs latency + overhead + max(bytes sent,
/// bytes received) / min(bandwidth x payload_fraction, host bandwidth), and the calls of a step follow each other
/// (as the ring's do). Fan-in (a server receiving from N workers one after another) is N such
/// messages.
class Link : public NetworkModel {
 public:
  explicit Link(LinkOptions options);
  std::string name() const override { return "link"; }
  double project(const ByteCounters& delta) const override;
  std::optional<LinkSpec> link() const override { return spec_; }
  const LinkOptions* emulated() const override { return options_.emulate ? &options_ : nullptr; }

 private:
  LinkOptions options_;
  LinkSpec spec_;
};

struct ClusterOptions {
  std::vector<std::int64_t> islands;
  bool emulate = false;  // the controller builds the islands for real (controller/emulated_network.hpp)
  ComponentSpec inside{"network", "link", {{"bandwidth", Value{std::string("10Gbit")}}, {"latency", Value{std::string("10us")}}}};
  ComponentSpec between{"network", "link", {{"bandwidth", Value{std::string("1Gbit")}}, {"latency", Value{std::string("50us")}}}};

  static OptionFields<ClusterOptions> fields();
};

/// Islands of ranks (consecutive ranks: islands = { 4, 4 } puts ranks 0-3 in the first) joined
/// by a slower link: each message is projected onto the link it crosses, `inside` or `between`,
/// as `link` projects it; in a collective, a phase in which any rank's message crosses islands
/// costs every rank the `between` link (the phase lasts as long as its slowest message:
/// ByteCounters::between_messages), its bytes times the phase's load (the messages that share an
/// island's link at once: between_shared_bytes), so a ring over two islands pays the slow link
/// at every step, and halving-doubling only at the steps whose partners sit in other islands,
/// with all of an island's ranks on its link at once.
class Cluster : public NetworkModel {
 public:
  explicit Cluster(ClusterOptions options);
  std::string name() const override { return "cluster"; }
  double project(const ByteCounters& delta) const override;
  std::vector<int> islands(int world) const override;
  bool emulates() const override { return emulate_; }
  std::optional<ResolvedIslands> resolved_islands() const override {
    return ResolvedIslands{sizes_, inside_, between_, emulate_};
  }
  const LinkSpec& inside() const { return inside_; }
  const LinkSpec& between() const { return between_; }

 private:
  std::vector<std::int64_t> sizes_;
  LinkSpec inside_, between_;
  bool emulate_ = false;
};

/// Every built-in network model (`link`, `cluster`).
Registry<NetworkModel> builtin_networks();

}  // namespace laconic::comm
