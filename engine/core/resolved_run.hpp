#pragma once
// What the engine resolved a run's configuration into when it planned it, once: how many ranks
// it has and where they live, what its compressor is (its registered capabilities, not its
// name), the link it is projected onto (and whether it is built for real), the hardware its
// reports project it onto, its test metric and which way is better, and the configuration it
// repeats (the run less its seed). The controller stores it as the run fact `resolved` (JSON
// with a version) and tells every rank it (controller/launch_order.hpp); the reports and the UI read it
// from there. docs/schema.md, "run_facts".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/hardware_profile.hpp"
#include "engine/core/units.hpp"

namespace laconic {

/// A compressor's nature, as its built instance declares it (compress::Capabilities and
/// CompressorTraits).
struct ResolvedCompressor {
  /// The payload is the gradient itself in fp32 and decodes to exactly it (none): nothing is
  /// compressed, and there is no coding work.
  bool full_precision = false;
  /// Payloads of different workers can be summed in compressed form, so an allreduce carries
  /// them and each worker decodes one sum.
  bool summable = false;
  /// A payload's size follows from the gradient's size alone.
  bool fixed_size = false;
  /// Its exchange needs more than one collective (PowerSGD).
  bool multi_round = false;
  /// Under allreduce its payloads are summed in this narrow format as they travel ("fp16",
  /// "bf16": compress::Capabilities::summed_in_transit), else empty.
  std::string summed_in_transit;

  bool operator==(const ResolvedCompressor&) const = default;
};

/// Where a run's ranks live (the experiment field `placement`).
enum class RankPlacement {
  Processes,  ///< one process per rank (processes(), the default)
  Threads,    ///< every rank a thread of one process, exchanging through memory (threads())
};

/// The placement's name in the experiment file and the run fact: "processes" or "threads".
const char* placement_name(RankPlacement placement);

/// The metric a run is judged by on the test split, and which way is better.
struct ResolvedMetric {
  std::string key;  ///< "test_accuracy"; "test_perplexity" for a language model
  bool higher_is_better = true;
  /// The dataset's split it is evaluated on: "test", or "validation" (perldoc keeps its test
  /// split untouched); "test" for runs recorded before it.
  std::string split = "test";

  bool operator==(const ResolvedMetric&) const = default;
};

/// A cluster of islands (network = cluster { }): ranks in islands of `sizes` ranks, in rank
/// order, `inside` between two ranks of one island, `between` between islands.
struct ResolvedIslands {
  std::vector<std::int64_t> sizes;
  LinkSpec inside, between;
  /// Built for real (cluster { emulate = true }): a bridge per island, a shaped link between.
  bool emulated = false;
  bool operator==(const ResolvedIslands&) const = default;
};

struct ResolvedRun {
  /// Raised when a field changes meaning; a fact of another version is not read.
  static constexpr int kVersion = 2;
  /// The run fact that holds it.
  static constexpr const char* kFact = "resolved";

  std::int64_t workers = 0;
  int world_size = 0;  ///< workers and the topology's servers
  RankPlacement placement = RankPlacement::Processes;
  ResolvedCompressor compressor;
  /// The link the network model projects the run's traffic onto; nothing for a network model
  /// that is not one link.
  std::optional<LinkSpec> link;
  /// The link is built for real (network = link { emulate = true }; controller/emulated_network.hpp).
  bool link_emulated = false;
  /// The islands of a cluster; nothing for a network model of one link.
  std::optional<ResolvedIslands> islands;
  /// The profile the reports project the run onto (hardware = profile { ... } or by_hand { ... });
  /// nothing for measured().
  std::optional<HardwareProfile> hardware;
  ResolvedMetric test_metric;
  /// Trainable parameters of the model (what `model_parameters` records); 0 for runs recorded before it.
  std::int64_t model_parameters = 0;
  /// The run less its seed (configuration_key, engine/core/run_config.hpp): what its seeds share.
  std::string configuration;
  /// Where it trained, as LibTorch names the device ("cpu", "cuda:0"); "cpu" for runs recorded
  /// before the field.
  std::string device = "cpu";
  /// Where its codecs ran: "cpu" (on a GPU, the gradient staged through pinned host memory: no
  /// CUDA codec is wired into training yet); "cpu" for runs recorded before the field.
  std::string codecs_on = "cpu";

  bool thread_ranks() const { return placement == RankPlacement::Threads; }

  /// {"version": 2, "workers", "world_size", "placement": "processes"|"threads",
  ///  "compressor": {"full_precision", "summable", "fixed_size", "multi_round"},
  ///  "link": null | {"text", "bits_per_second", "latency_seconds", "overhead_seconds",
  ///                  "host_bits_per_second", "payload_fraction", "emulated",
  ///                  "trace": [[at_seconds, bits_per_second, latency_seconds | null], ...] where it changes},
  ///  "islands": absent | {"sizes", "inside": a link as above, "between": a link, "emulated"},
  ///  "hardware": null | a hardware profile (docs/hardware.md),
  ///  "test_metric": {"key", "higher_is_better", "split"}, "model_parameters", "configuration",
  ///  "device", "codecs_on"}
  std::string to_json() const;
  /// The fact's text read back; nullopt for text that is not a fact of this version.
  static std::optional<ResolvedRun> from_json(const std::string& text);

  bool operator==(const ResolvedRun&) const = default;
};

}  // namespace laconic
