#pragma once
// The engine's registries behind one Catalog: what the Lua DSL and `laconic list` describe, and
// what a worker builds its run from.
#include <optional>
#include <string>
#include <tuple>

#include "engine/comm/network.hpp"
#include "engine/compress/compressor.hpp"
#include "engine/core/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/core/layer_costs.hpp"
#include "engine/core/registry.hpp"
#include "engine/core/resolved_run.hpp"
#include "engine/core/run_config.hpp"
#include "engine/hardware.hpp"
#include "engine/placement.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/topology/topology.hpp"
#include "engine/train/optim/lr_schedule.hpp"
#include "engine/train/churn.hpp"
#include "engine/train/device.hpp"
#include "engine/train/stopping.hpp"

namespace laconic::train {
class Dataset;
class Model;
class Optimizer;
struct WorkerParts;
}  // namespace laconic::train

namespace laconic::engine {

class EngineCatalog : public Catalog {
 public:
  EngineCatalog();
  std::vector<std::string> kinds() const override;
  std::vector<ComponentInfo> infos(const std::string& kind) const override;
  ComponentSpec resolve(const ComponentSpec& spec) const override;
  /// `churn = { leave { ... }, join { ... } }`: the script the changes make (train::combine_churn_changes).
  ComponentSpec combine(const std::string& kind, const std::vector<ComponentSpec>& parts) const override;
  /// The run's churn, a random one's seed 0 made the run's.
  static ComponentSpec churn_of_run(const RunConfig& config);

  /// Builds every component of rank `rank` of a run. Seeds LibTorch with config.seed before
  /// building the model, so all workers of a run start from identical weights; the compressor
  /// comes seeded with config.seed and the rank (compress::build_compressor).
  train::WorkerParts build(const RunConfig& config, int rank) const;

  /// ConfigError unless the run's model fits its dataset (classes, bptt, example shape), its
  /// compressor can be built for the model's layers and run by its topology, and its schedule,
  /// exchange and placement go with them; build() and resolve_run() check the same (check_parts).
  /// Builds them without loading data.
  void check_run(const RunConfig& config) const;

  /// The run resolved once (engine/core/resolved_run.hpp): its ranks, where they live, and what
  /// its compressor is, asked of the compressor built for the model's layers; checked as
  /// check_run checks it. Builds its parts without loading data.
  ResolvedRun resolve_run(const RunConfig& config) const;

  /// The run's compressor measured on each layer of its model on this host, beside `none`
  /// (engine/compress/layer_costs.hpp): what `laconic advise` decides which layers to leave
  /// dense from. Nothing for a compressor that exchanges itself or sends fp32. Reads no data.
  std::optional<LayerCodecCosts> measure_layer_costs(const RunConfig& config) const;

  /// Reads the run's dataset, both splits, into this process's split cache
  /// (engine/train/data/split_cache.hpp) when it has one: workers forked afterwards find it there.
  /// Returns the seconds it took; nothing for a dataset each worker reads itself.
  std::optional<double> preload_data(const RunConfig& config) const;

  /// The run's network is to be emulated (network = link { emulate = true } or cluster { emulate
  /// = true }): the controller then builds it (controller/emulated_network.hpp).
  bool emulates_network(const RunConfig& config) const;

  /// Ranks a run has: its workers plus its topology's extra ranks (parameter servers).
  int world_size(const RunConfig& config) const;

  /// The run's ranks are threads of one process (placement = threads()).
  bool thread_ranks(const RunConfig& config) const;

  /// Whether every process of the run can checkpoint and resume (engine/train/checkpoint.hpp):
  /// all but parameter servers driven asynchronously (stale_sync, async), whose workers never
  /// pass a common round. "" when they can, else why not.
  std::string why_not_checkpointed(const RunConfig& config) const;

 private:
  /// ConfigError unless every component of a run with exchange = "update" (or an optimizer that
  /// brings its own codec, which exchanges updates) can exchange updates
  /// (Registry::why_not_update_exchange), naming the one that cannot and why.
  void check_exchange(const RunConfig& config) const;
  /// An optimizer with its own codec (DeMo): the run's compressor must be none() and its topology
  /// one that gathers (allreduce or allgather, not overlapped); ConfigError otherwise.
  void check_own_codec(const RunConfig& config) const;
  /// What the run compresses with: the codec its optimizer brings (Optimizer::own_codec), else
  /// the run's compressor, for layers of `shapes`, seeded.
  std::unique_ptr<compress::Compressor> run_compressor(const RunConfig& config,
                                                       const std::vector<compress::LayerShape>& shapes,
                                                       compress::CompressorSeed seed) const;
  /// ConfigError when the schedule has a staleness bound (stale_sync, async) and the topology
  /// cannot serve it (TopologyTraits::serves_asynchronously), or when local SGD meets a server
  /// that sends weights; asked of the registries without building either.
  void check_schedule(const RunConfig& config) const;
  /// ConfigError for what ranks placed as threads cannot run (its topology and network as
  /// built), and why.
  /// A cluster's islands hold the run's ranks; the hierarchical allreduce needs islands of one size.
  void check_islands(const RunConfig& config, const comm::NetworkModel& network) const;
  /// Workers that leave and join run under synchronous SGD, local SGD or whole-model DiLoCo, over
  /// an allreduce of a summable compressor, on one link, with worker 0 staying (train::Churn::check).
  void check_churn(const RunConfig& config, const compress::Compressor& compressor,
                   const topology::Topology& topology, const comm::NetworkModel& network) const;
  void check_placement(const RunConfig& config, const topology::Topology& topology,
                       const comm::NetworkModel& network) const;
  /// The run's device trains it (device.hpp: cuda() needs a LibTorch with CUDA); a staged gradient
  /// (a GPU's, or cpu { staged = true }) is exchanged whole, not in overlapped buckets, and a GPU
  /// trains ranks placed as processes.
  void check_device(const RunConfig& config, const topology::Topology& topology) const;
  /// elastic = true: what a lost worker's relaunch can rejoin so far (ConfigError otherwise).
  void check_elastic(const RunConfig& config, const compress::Compressor& compressor,
                     const topology::Topology& topology, const comm::NetworkModel& network) const;
  /// Every check a run passes, on its parts as built (planned_parts' or a rank's in build()):
  /// ConfigError for the first that fails.
  void check_parts(const RunConfig& config, const train::Model& model, const train::Dataset& dataset,
                   const compress::Compressor& compressor, const topology::Topology& topology,
                   const comm::NetworkModel& network) const;
  /// The parts check_run and resolve_run look at, built once and checked, without loading data.
  struct PlannedParts;
  PlannedParts planned_parts(const RunConfig& config) const;

  /// Every registry, in the order `laconic list` shows the kinds; each knows its kind's name.
  auto registries() const {
    return std::tie(datasets_, models_, optimizers_, topologies_, schedules_, compressors_, networks_, lr_schedules_,
                    stop_rules_, placements_, hardware_, churn_, devices_);
  }
  /// `ask` of the registry of `kind`; ConfigError naming every kind for another.
  template <class Answer, class Ask>
  Answer of_kind(const std::string& kind, Ask&& ask) const {
    std::optional<Answer> answer;
    std::apply(
        [&](const auto&... registry) {
          ((answer || registry.kind() != kind ? void() : void(answer.emplace(ask(registry)))), ...);
        },
        registries());
    if (!answer) {
      std::string known;
      for (const std::string& k : kinds()) known += (known.empty() ? "" : ", ") + k;
      throw ConfigError(str_cat("unknown component kind '", kind, "'; known: ", known));
    }
    return std::move(*answer);
  }

  Registry<train::Dataset> datasets_;
  Registry<train::Model> models_;
  Registry<train::Optimizer> optimizers_;
  Registry<topology::Topology> topologies_;
  Registry<schedule::Schedule> schedules_;
  Registry<compress::Compressor> compressors_;
  Registry<comm::NetworkModel> networks_;
  Registry<train::LrSchedule> lr_schedules_;
  Registry<train::StopRule> stop_rules_;
  Registry<Placement> placements_;
  Registry<Hardware> hardware_;
  Registry<train::Churn> churn_;
  Registry<train::Device> devices_;
};

}  // namespace laconic::engine
