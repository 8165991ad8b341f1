#include "engine/catalog.hpp"

#include <algorithm>
#include <chrono>

#include "engine/comm/network.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/compress/layer_costs.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "engine/core/goal.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/schedule/builtin.hpp"
#include "engine/topology/builtin.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/optim/lr_schedule.hpp"
#include "engine/train/optim/outer_step.hpp"
#include "engine/train/models/objective.hpp"
#include "engine/train/worker.hpp"

namespace laconic::engine {

EngineCatalog::EngineCatalog()
    : datasets_(train::builtin_datasets()),
      models_(train::builtin_models()),
      optimizers_(train::builtin_optimizers()),
      topologies_(topology::builtin_topologies()),
      schedules_(schedule::builtin_schedules()),
      compressors_(compress::builtin_compressors()),
      networks_(comm::builtin_networks()),
      lr_schedules_(train::builtin_lr_schedules()),
      stop_rules_(train::builtin_stop_rules()),
      placements_(builtin_placements()),
      hardware_(builtin_hardware()),
      churn_(train::builtin_churn()),
      devices_(train::builtin_devices()) {
  schedules_.resolve_nested_with(optimizers_);  // diloco's outer optimizer
}

std::vector<std::string> EngineCatalog::kinds() const {
  return std::apply([](const auto&... registry) { return std::vector<std::string>{registry.kind()...}; },
                    registries());
}

std::vector<ComponentInfo> EngineCatalog::infos(const std::string& kind) const {
  return of_kind<std::vector<ComponentInfo>>(kind, [](const auto& registry) { return registry.infos(); });
}

ComponentSpec EngineCatalog::resolve(const ComponentSpec& spec) const {
  return of_kind<ComponentSpec>(spec.kind, [&](const auto& registry) { return registry.resolve(spec); });
}

ComponentSpec EngineCatalog::combine(const std::string& kind, const std::vector<ComponentSpec>& parts) const {
  if (kind == "churn") {
    std::vector<ComponentSpec> resolved;
    for (const ComponentSpec& part : parts) resolved.push_back(part.kind == kind ? resolve(part) : part);
    return resolve(train::combine_churn_changes(resolved));
  }
  return Catalog::combine(kind, parts);
}

namespace {

// The shape of each of the model's parameters, as compressors see the gradient's layers.
std::vector<compress::LayerShape> layer_shapes(train::Model& model) {
  std::vector<compress::LayerShape> shapes;
  for (const auto& p : model.parameters()) {
    compress::LayerShape shape;
    for (const std::int64_t d : p.sizes()) shape.push_back(static_cast<std::size_t>(d));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

// The run's compressor kind for a flat piece a topology codes on its own (a parameter server's
// shard or pull), seeded from the run's seed, the piece's stream and its index.
topology::FlatCompressorFactory flat_compressor_factory(const Registry<compress::Compressor>& registry,
                                                        const RunConfig& config) {
  return [registry, spec = registry.resolve(config.compressor), seed = config.seed](
             std::size_t size, std::uint64_t stream, int index, bool error_feedback) {
    ComponentSpec piece = spec;
    if (!error_feedback && piece.fields.count("error_feedback")) piece.fields["error_feedback"] = false;
    return compress::build_compressor(registry, piece, {{size}},
                                      {compress::derive_seed(static_cast<std::uint64_t>(seed), stream), index});
  };
}

// An overlapped exchange starts during backward: only a step that exchanges its gradient right
// after computing it (the synchronous schedule) has one to overlap.
void check_overlap(const topology::Topology& topology, const schedule::ScheduleTraits& schedule,
                   const RunConfig& config) {
  if (topology.overlap() && !schedule.exchanges_each_gradient)
    throw ConfigError(str_cat(topology.name(),
                              " { overlap = true } needs schedule = synchronous, "
                              "got ",
                              config.schedule.name));
}

}  // namespace

std::optional<double> EngineCatalog::preload_data(const RunConfig& config) const {
  const auto start = std::chrono::steady_clock::now();
  auto dataset = datasets_.create(config.dataset);
  if (!dataset->cached()) return std::nullopt;  // each worker reads it itself
  dataset->train();
  dataset->evaluation();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct EngineCatalog::PlannedParts {
  std::unique_ptr<train::Dataset> dataset;
  std::unique_ptr<train::Model> model;
  std::unique_ptr<compress::Compressor> compressor;
  std::unique_ptr<topology::Topology> topology;
  std::unique_ptr<comm::NetworkModel> network;
};

train::WorkerParts EngineCatalog::build(const RunConfig& config, int rank) const {
  train::WorkerParts parts;
  parts.dataset = datasets_.create(config.dataset);
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  parts.model = models_.create(config.model);
  parts.optimizer = optimizers_.create(config.optimizer);
  parts.topology = topologies_.create(config.topology);
  parts.schedule = schedules_.create(config.schedule);
  if (const auto& outer = parts.schedule->traits().outer_optimizer)
    for (std::int64_t f = 0; f < parts.schedule->traits().fragments; ++f)
      parts.outer_optimizers.push_back(optimizers_.create(*outer));
  parts.compressor =
      run_compressor(config, layer_shapes(*parts.model), {static_cast<std::uint64_t>(config.seed), rank});
  parts.compressor_for_layers = [registry = compressors_, spec = config.compressor](
                                    const std::vector<compress::LayerShape>& shapes, compress::CompressorSeed seed) {
    return compress::build_compressor(registry, spec, shapes, seed);
  };
  parts.network = networks_.create(config.network);
  check_parts(config, *parts.model, *parts.dataset, *parts.compressor, *parts.topology, *parts.network);
  parts.lr_schedule_spec = lr_schedules_.resolve(config.lr_schedule);
  parts.lr_schedule = lr_schedules_.create(parts.lr_schedule_spec);
  parts.stop_rule = stop_rules_.create(config.stopping);
  parts.churn = churn_.create(churn_of_run(config));
  const auto device = devices_.create(config.device);
  parts.device = device->where();
  parts.staged_gradient = device->staged();
  parts.topology->wire({.staleness_bound = parts.schedule->staleness_bound(),
                        .flat_compressor = flat_compressor_factory(compressors_, config)});
  parts.stragglers = train::Stragglers::from(config.schedule);
  return parts;
}

void EngineCatalog::check_parts(const RunConfig& config, const train::Model& model, const train::Dataset& dataset,
                                const compress::Compressor& compressor, const topology::Topology& topology,
                                const comm::NetworkModel& network) const {
  train::check_compatible(model, dataset);
  if (optimizers_.create(config.optimizer)->brings_codec()) check_own_codec(config);  // before its codec meets the topology
  topology.check(compressor);  // refused here, before any worker starts, as every worker would
  check_overlap(topology, schedules_.traits(config.schedule), config);
  if (const std::int64_t fragments = schedules_.traits(config.schedule).fragments; fragments > 1) {
    std::vector<std::int64_t> sizes;  // Streaming DiLoCo cuts the model by parameter tensors
    for (const auto& p : model.parameters()) sizes.push_back(p.numel());
    (void)train::fragment_bounds(sizes, fragments);
  }
  check_schedule(config);
  if (const auto lr = config.optimizer.fields.find("lr");
      lr != config.optimizer.fields.end() && std::holds_alternative<StepFunction>(lr->second))
    throw ConfigError(str_cat(config.optimizer.name, ".lr is a function; the run's optimizer changes its rate with ",
                              "lr_schedule (a component, or lr_schedule = function(epoch, step) ... end); a function "
                              "lr is for diloco's outer optimizer"));
  check_exchange(config);
  check_placement(config, topology, network);
  check_islands(config, network);
  check_churn(config, compressor, topology, network);
  check_device(config, topology);
  check_elastic(config, compressor, topology, network);
}

void EngineCatalog::check_elastic(const RunConfig& config, const compress::Compressor& compressor,
                                  const topology::Topology& topology, const comm::NetworkModel& network) const {
  if (!config.elastic) return;
  const auto refuse = [&](const std::string& what) {
    throw ConfigError(str_cat("elastic = true runs ", what, " so far (issue 68)"));
  };
  if (config.placement.name != "processes")
    refuse(str_cat("its workers as processes (placement = processes()), not ", config.placement.name,
                   "(): a thread rank cannot die alone"));
  if (config.schedule.name != "synchronous")
    refuse(str_cat("under synchronous(), not ", config.schedule.name, " { }"));
  if (config.topology.name != "allreduce" || topology.overlap())
    refuse("over topology = allreduce { } without overlap (the ring around the workers present)");
  if (!compressor.summable()) refuse(str_cat("compressors whose payloads are summed, not ", config.compressor.name));
  if (optimizers_.create(config.optimizer)->brings_codec())
    refuse(str_cat("optimizers whose state is their own (sgd, adam, adamw, lamb), not ", config.optimizer.name));
  if (!network.islands(world_size(config)).empty()) refuse("on one link, not on islands");
  if (config.churn.name != "calm") refuse("without a scripted or drawn churn beside it");
  if (config.workers < 2) refuse("with 2 workers or more");
}

void EngineCatalog::check_device(const RunConfig& config, const topology::Topology& topology) const {
  const auto device = devices_.create(config.device);
  const std::string where = device->where();  // refuses, with the reason, a device it cannot train on
  if (where == "cpu" && !device->staged()) return;
  const auto refuse = [&](const std::string& what) {
    throw ConfigError(str_cat("device = ", config.device.name, " { } on ", where, " ", what, " (issue 69)"));
  };
  if (topology.overlap())
    refuse("cannot overlap the exchange with backward yet: the buckets would be staged one by one; use "
           "allreduce { overlap = false }");
  if (where != "cpu" && thread_ranks(config))
    refuse("trains its ranks as processes: thread ranks time their phases on their threads' CPU, which a GPU's "
           "work is not on; use placement = processes()");
}

ComponentSpec EngineCatalog::churn_of_run(const RunConfig& config) {
  ComponentSpec churn = config.churn;
  const auto seed = churn.fields.find("seed");
  if (churn.name == "random" && (seed == churn.fields.end() || seed->second == Value{std::int64_t{0}}))
    churn.fields["seed"] = Value{config.seed};
  return churn;
}

void EngineCatalog::check_churn(const RunConfig& config, const compress::Compressor& compressor,
                                const topology::Topology& topology, const comm::NetworkModel& network) const {
  if (config.churn.name == "calm") return;
  const auto refuse = [&](const std::string& what) {
    throw ConfigError(str_cat("churn = ", config.churn.name, " { } runs ", what, " so far (issue 68)"));
  };
  const std::string& schedule = config.schedule.name;
  if (schedule != "synchronous" && schedule != "local_sgd" && schedule != "diloco")
    refuse(str_cat("under synchronous(), local_sgd { } and diloco { }, not ", schedule));
  if (schedule == "diloco" && schedules_.traits(config.schedule).streaming)
    refuse("under diloco's whole-model rounds, not Streaming DiLoCo (fragments, overlap, alpha)");
  if (config.topology.name != "allreduce" || topology.overlap())
    refuse("over topology = allreduce { } without overlap (the ring around the workers present)");
  if (!compressor.summable()) refuse(str_cat("compressors whose payloads are summed, not ", config.compressor.name));
  if (!network.islands(world_size(config)).empty()) refuse("on one link, not on islands");
  const auto churn = churn_.create(churn_of_run(config));
  if (schedule == "synchronous" && churn->any_join(train::JoinState::Fresh, config.workers))
    refuse("a join's state = \"fresh\" under local_sgd { } and diloco { }, not synchronous(): the joiner's "
           "optimizer state would differ from the others', and its weights with it after one step");
  if (schedule == "synchronous" && churn->any_join(train::JoinState::Averaged, config.workers))
    refuse("a join's state = \"averaged\" under local_sgd { } and diloco { }, not synchronous(): there every "
           "worker's optimizer state is the same, worker 0's (\"copied\"), and a mean of them would part from it by "
           "rounding");
  if (churn->any_join(train::JoinState::Averaged, config.workers) && optimizers_.create(config.optimizer)->brings_codec())
    refuse("a join's state = \"averaged\" with optimizers whose state is their own (sgd, adam, adamw, lamb), not " +
           config.optimizer.name + ", whose state lives in its codec");
  if (config.churn_batch == ChurnBatch::Global &&
      (config.exchange == Exchange::Update || optimizers_.create(config.optimizer)->brings_codec()))
    refuse("churn_batch = \"global\" where gradients are averaged as computed (its loss weighting makes their "
           "average the step's mean), not with exchange = \"update\" or an optimizer that brings its codec");
  churn->check(config.workers);
}

void EngineCatalog::check_islands(const RunConfig& config, const comm::NetworkModel& network) const {
  const std::vector<int> islands = network.islands(world_size(config));  // a cluster's islands hold every rank
  if (schedules_.traits(config.schedule).synchronous_islands && islands.empty())
    throw ConfigError(str_cat(config.schedule.name, " { islands = true } averages the gradient inside each island: it "
                              "needs network = cluster { islands = { ... } }"));
  const auto algorithm = config.topology.fields.find("algorithm");
  if (config.topology.name != "allreduce" || algorithm == config.topology.fields.end() ||
      !std::holds_alternative<std::string>(algorithm->second) || std::get<std::string>(algorithm->second) != "hierarchical")
    return;
  const int island_count = islands.empty() ? 0 : islands.back() + 1;
  bool equal = island_count > 0;
  for (int i = 0; equal && i < island_count; ++i)
    equal = std::count(islands.begin(), islands.end(), i) * island_count == static_cast<std::int64_t>(islands.size());
  if (!equal)
    throw ConfigError("allreduce { algorithm = \"hierarchical\" } runs on islands of one size: network = cluster { "
                      "islands = { 2, 2 } }, say, with the ranks' count a multiple of the islands'");
}

EngineCatalog::PlannedParts EngineCatalog::planned_parts(const RunConfig& config) const {
  // Datasets load lazily and models are small to build: this reads no data.
  PlannedParts parts;
  parts.dataset = datasets_.create(config.dataset);
  parts.model = models_.create(config.model);
  parts.compressor = run_compressor(config, layer_shapes(*parts.model), {});
  parts.topology = topologies_.create(config.topology);
  parts.network = networks_.create(config.network);
  check_parts(config, *parts.model, *parts.dataset, *parts.compressor, *parts.topology, *parts.network);
  return parts;
}

void EngineCatalog::check_run(const RunConfig& config) const { planned_parts(config); }

ResolvedRun EngineCatalog::resolve_run(const RunConfig& config) const {
  const PlannedParts parts = planned_parts(config);
  const compress::Capabilities can = parts.compressor->capabilities();
  const auto hardware = hardware_.create(config.hardware);
  ResolvedRun run;
  run.workers = config.workers;
  run.world_size = world_size(config);
  run.placement = thread_ranks(config) ? RankPlacement::Threads : RankPlacement::Processes;
  run.compressor = {.full_precision = can.lossless,
                    .summable = can.summable,
                    .fixed_size = can.fixed_size,
                    .multi_round = compressors_.traits(config.compressor).multi_round,
                    .summed_in_transit = compress::transit_format_name(can.summed_in_transit)};
  run.link = parts.network->link();
  run.link_emulated = parts.network->emulated() != nullptr;
  run.islands = parts.network->resolved_islands();
  if (const HardwareProfile* profile = hardware->profile()) run.hardware = *profile;
  // A language model (one that predicts a sequence) is judged by perplexity, the rest by accuracy.
  const std::string metric = parts.model->sequence_length() > 0 ? keys::kTestPerplexity : keys::kTestAccuracy;
  run.test_metric = {metric, keys::goal_of(metric) == Goal::Max, parts.dataset->evaluation_split()};
  for (const auto& p : parts.model->parameters()) run.model_parameters += p.numel();
  run.configuration = config.configuration_key();
  run.device = devices_.create(config.device)->where();
  run.codecs_on = "cpu";  // a GPU run's gradient is staged through host memory (train/on_device.hpp)
  return run;
}

std::optional<LayerCodecCosts> EngineCatalog::measure_layer_costs(const RunConfig& config) const {
  const auto model = models_.create(config.model);
  return compress::measure_layer_costs(compressors_, config.compressor, layer_shapes(*model));
}

void EngineCatalog::check_placement(const RunConfig& config, const topology::Topology& topology,
                                    const comm::NetworkModel& network) const {
  if (!thread_ranks(config)) return;
  const auto refuse = [&](const std::string& what, const std::string& why) {
    throw ConfigError(str_cat("placement = threads() cannot run ", what, ": ", why, "; use placement = processes()"));
  };
  if (network.emulates())
    refuse("an emulated network (network = link { emulate = true } or cluster { emulate = true })",
           "its ranks share one process, so no rank has a network namespace and a shaped link of its own");
  if (topology.overlap())
    refuse("allreduce { overlap = true }",
           "what an overlapped exchange hides behind backward is a matter of wall time, which ranks that share "
           "cores cannot measure");
}

bool EngineCatalog::thread_ranks(const RunConfig& config) const { return placements_.traits(config.placement).threads; }

void EngineCatalog::check_schedule(const RunConfig& config) const {
  const topology::TopologyTraits topology = topologies_.traits(config.topology);
  const schedule::ScheduleTraits schedule = schedules_.traits(config.schedule);
  if (topology.pulls_weights && config.clip_norm > 0)
    throw ConfigError(str_cat("clip_norm = ", config.clip_norm, " with topology ", config.topology.name,
                              " { pull = \"weights\" }: its servers step the optimizer, each on its shard of the "
                              "gradient, so no rank sees the global norm; use pull = \"gradients\" or leave clip_norm out"));
  if (topology.pulls_weights && schedule.averages_models)
    throw ConfigError(str_cat("schedule ", config.schedule.name, " averages models itself; with ",
                              "it use parameter_server { pull = \"gradients\" }"));
  if (schedule.outer_optimizer && topology.mixes_models)
    throw ConfigError(str_cat("schedule ", config.schedule.name, " steps weights that every worker shares with the ",
                              "average of their pseudo-gradients, and topology ", config.topology.name,
                              " leaves each worker its own mix of its neighbours' models, no shared average; use ",
                              "allreduce, allgather or parameter_server { pull = \"gradients\" }"));
  if (!schedule.staleness_bound || topology.serves_asynchronously) return;
  throw ConfigError(str_cat("schedule ", config.schedule.name,
                            " needs topology = parameter_server { pull = \"weights\" }, whose server steps its "
                            "optimizer with each push on its own; got ",
                            config.topology.name));
}

std::unique_ptr<compress::Compressor> EngineCatalog::run_compressor(const RunConfig& config,
                                                                   const std::vector<compress::LayerShape>& shapes,
                                                                   compress::CompressorSeed seed) const {
  auto codec = optimizers_.create(config.optimizer)->own_codec();
  if (!codec) return compress::build_compressor(compressors_, config.compressor, shapes, seed);
  codec->set_layer_shapes(shapes);
  codec->set_seed(seed.run_seed, seed.rank);
  return codec;
}

void EngineCatalog::check_own_codec(const RunConfig& config) const {
  const std::string& optimizer = config.optimizer.name;
  if (config.compressor.name != "none")
    throw ConfigError(str_cat("optimizer ", optimizer, " compresses its updates with its own codec; compressor must ",
                              "be none(), got ", config.compressor.name));
  // Every worker must receive every worker's payload: no server between them, no neighbours only.
  const topology::TopologyTraits traits = topologies_.traits(config.topology);
  if (traits.extra_ranks > 0 || traits.mixes_models)
    throw ConfigError(str_cat("optimizer ", optimizer, " gathers its workers' payloads; topology must be allreduce() ",
                              "or allgather(), got ", config.topology.name));
  if (topologies_.create(config.topology)->overlap())
    throw ConfigError(str_cat("optimizer ", optimizer, " exchanges after backward, whole: ", config.topology.name,
                              " { overlap = true } cannot bucket it"));
}

void EngineCatalog::check_exchange(const RunConfig& config) const {
  const bool own_codec = optimizers_.create(config.optimizer)->brings_codec();
  if (config.exchange == Exchange::Gradient && !own_codec) return;
  const std::pair<const ComponentSpec*, std::string> refusals[] = {
      {&config.compressor, compressors_.why_not_update_exchange(config.compressor)},
      {&config.topology, topologies_.why_not_update_exchange(config.topology)},
      {&config.schedule, schedules_.why_not_update_exchange(config.schedule)},
      {&config.optimizer, optimizers_.why_not_update_exchange(config.optimizer)},
  };
  for (const auto& [spec, why] : refusals)
    if (!why.empty())
      throw ConfigError(str_cat(own_codec ? str_cat("optimizer ", config.optimizer.name,
                                                    " exchanges its updates (exchange = \"update\"), which cannot run "
                                                    "with ")
                                          : std::string("exchange = \"update\" cannot run with "),
                                spec->kind, " ", spec->name, ": ", why));
}

bool EngineCatalog::emulates_network(const RunConfig& config) const {
  return networks_.create(config.network)->emulates();
}

int EngineCatalog::world_size(const RunConfig& config) const {
  return static_cast<int>(config.workers) + topologies_.traits(config.topology).extra_ranks;
}

std::string EngineCatalog::why_not_checkpointed(const RunConfig& config) const {
  if (thread_ranks(config))
    return "ranks placed as threads share one LibTorch generator, which a rank's checkpoint cannot hold alone";
  if (world_size(config) == config.workers) return "";
  if (!schedules_.traits(config.schedule).staleness_bound) return "";
  return str_cat("an asynchronous parameter server (schedule ", config.schedule.name,
                 ") has no round that every worker passes");
}

}  // namespace laconic::engine
