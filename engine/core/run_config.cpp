#include "engine/core/run_config.hpp"

#include "engine/core/error.hpp"

namespace laconic {

const char* exchange_name(Exchange exchange) { return exchange == Exchange::Update ? "update" : "gradient"; }

const char* churn_batch_name(ChurnBatch rule) { return rule == ChurnBatch::Global ? "global" : "per_worker"; }

const char* elastic_name(bool elastic) { return elastic ? "true" : "false"; }

namespace {

using Type = RunField::Type;

// The default is RunConfig's own member's, written once there.
RunField component(std::string name, std::string key, ComponentSpec RunConfig::*member, std::string doc) {
  RunField f{.name = std::move(name), .key = std::move(key), .type = Type::Component, .doc = std::move(doc)};
  f.kind = f.key;
  f.default_component = (RunConfig{}.*member).name;
  f.component = member;
  return f;
}

// A field whose component is of another kind than its name says, read by reports only (baseline:
// a compressor).
RunField report_component(std::string name, std::string key, std::string kind, ComponentSpec RunConfig::*member,
                           std::string doc) {
  RunField f = component(std::move(name), std::move(key), member, std::move(doc));
  f.kind = std::move(kind);
  f.read_by_training = false;
  return f;
}

RunField integer(std::string name, std::int64_t RunConfig::*member, std::int64_t minimum, std::string doc) {
  RunField f{.name = name, .key = name, .type = Type::Int, .doc = std::move(doc)};
  f.minimum = minimum;
  f.integer = member;
  return f;
}

RunField number(std::string name, double RunConfig::*member, bool zero_allowed, std::string doc) {
  RunField f{.name = name, .key = name, .type = Type::Number, .doc = std::move(doc)};
  f.zero_allowed = zero_allowed;
  f.number = member;
  return f;
}

// `f` with `flag` set to `value`.
RunField with(RunField f, bool RunField::*flag, bool value) {
  f.*flag = value;
  return f;
}

// Added after runs were first recorded: read as the default when a configuration lacks it.
RunField since_first_records(RunField f) { return with(std::move(f), &RunField::optional_in_record, true); }

// Also left out of the recorded configuration at its default, so that configurations recorded
// before it existed compare equal to today's.
RunField recorded_when_set(RunField f) {
  return with(since_first_records(std::move(f)), &RunField::recorded_at_default, false);
}

// Set by the sweep's plan (seed, repetition), not by a field of the file.
RunField plan_set(RunField f) { return with(std::move(f), &RunField::in_file, false); }

// A field of a few words, each a value of an enum (`name_of` spells them), the default first;
// recorded only when set.
template <typename E>
RunField choice_field(const std::string& name, std::string doc, E RunConfig::*member, const char* (*name_of)(E),
                      std::vector<E> values) {
  RunField f{.name = name, .key = name, .type = Type::Choice, .doc = std::move(doc)};
  std::string allowed;
  for (E v : values) {
    f.choices.push_back(name_of(v));
    allowed += str_cat(allowed.empty() ? "" : " or ", "\"", name_of(v), "\"");
  }
  f.get_choice = [member, name_of](const RunConfig& run) { return std::string(name_of(run.*member)); };
  f.set_choice = [=](RunConfig& run, const std::string& word) {
    for (E v : values)
      if (word == name_of(v)) {
        run.*member = v;
        return;
      }
    throw ConfigError(str_cat(name, " must be ", allowed, ", got \"", word, "\""));
  };
  return recorded_when_set(std::move(f));
}

RunField exchange_field() {
  return choice_field("exchange",
                      "what workers compress and exchange: \"gradient\" (momentum and learning rate applied to the "
                      "average) or \"update\" (each worker applies them first and sends lr x its step, error "
                      "feedback on the update; docs/compressors.md)",
                      &RunConfig::exchange, exchange_name, {Exchange::Gradient, Exchange::Update});
}

RunField churn_batch_field() {
  return choice_field("churn_batch",
                      "the batches of a step with workers away (churn): \"per_worker\" (each present worker its "
                      "own batch: the global batch shrinks) or \"global\" (the absent workers' examples of the step "
                      "shared among those present, the loss weighted by examples: the global batch and its gradient "
                      "stay); the learning rate is the run's under both (docs/topologies.md)",
                      &RunConfig::churn_batch, churn_batch_name, {ChurnBatch::PerWorker, ChurnBatch::Global});
}

RunField elastic_field() {
  return choice_field("elastic",
                      "true: a worker process (not worker 0) that dies, kill -9 included, is dropped from the run "
                      "at once and relaunched, and rejoins with the weights of the workers that stayed; the "
                      "others go on meanwhile (processes, synchronous allreduce only; docs/topologies.md, "
                      "\"Elastic runs\"). false (the default): a lost worker fails the run",
                      &RunConfig::elastic, elastic_name, {false, true});
}

}  // namespace

const std::vector<RunField>& RunConfig::fields() {
  using C = RunConfig;
  static const std::vector<RunField> kFields = {
      recorded_when_set(report_component(
          "baseline", "baseline", "compressor", &C::baseline,
          "the compressor reports judge every other one against: none() (the default, full precision) or "
          "another of the swept compressors, with its fields (baseline = fp16()); docs/reports.md")),
      integer("batch_size", &C::batch_size, 1, "examples per worker per step"),
      recorded_when_set(component("churn", "churn", &C::churn,
                                  "workers that leave and join: calm() (the default) or script { events = \"leave 3 "
                                  "at 200; join 3 at 400\" } (docs/topologies.md)")),
      churn_batch_field(),
      recorded_when_set(number("clip_norm", &C::clip_norm, true,
                               "the gradient the optimizer steps on (the workers' average) is scaled to this global "
                               "L2 norm when above it, as torch.nn.utils.clip_grad_norm_; 0 = no clipping (>= 0)")),
      component("compressor", "compressor", &C::compressor, "gradient compressor"),
      component("data", "dataset", &C::dataset, "dataset"),
      recorded_when_set(component("device", "device", &C::device,
                                  "where the run trains: cpu() (the default), cuda { index } (a GPU; needs a LibTorch "
                                  "with CUDA) or auto() (GPU 0 where there is one, else the CPU); docs/hardware.md")),
      since_first_records(number("divergence_factor", &C::divergence_factor, true,
                                 "a training loss above this many times the first step's (or NaN / inf) ends the run "
                                 "DIVERGED; 0 = only NaN / inf (>= 0)")),
      elastic_field(),
      integer("epochs", &C::epochs, 1, "passes over each worker's shard"),
      recorded_when_set(component("hardware", "hardware", &C::hardware,
                                  "hardware reports also project the runs onto: measured() (none, the default) or "
                                  "profile { file = ... } (docs/hardware.md)")),
      recorded_when_set(integer("eval_every", &C::eval_every, 0,
                                "steps between extra evaluations on the test split (worker 0), besides every "
                                "epoch's end; 0 = epoch ends only")),
      integer("eval_limit", &C::eval_limit, 0, "test examples evaluated per epoch; 0 = whole test split"),
      exchange_field(),
      since_first_records(
          component("lr_schedule", "lr_schedule", &C::lr_schedule, "learning-rate schedule")),
      integer("max_steps", &C::max_steps, 0, "steps per epoch; 0 = whole shard"),
      component("model", "model", &C::model, "model"),
      since_first_records(
          component("network", "network", &C::network, "the link communication time is projected onto")),
      component("optimizer", "optimizer", &C::optimizer, "optimizer"),
      recorded_when_set(component("placement", "placement", &C::placement,
                                  "where the ranks live: processes() (a process each) or threads() (threads of one "
                                  "process: as many ranks as a cluster's on one host)")),
      plan_set(integer("repetition", &C::repetition, 0,
                       "index among the runs of the same seed and swept values (runs_per_seed)")),
      component("schedule", "schedule", &C::schedule, "when workers exchange updates"),
      plan_set(integer("seed", &C::seed, 0, "seeds weights, shuffling and stochastic compressors (seeds)")),
      since_first_records(component("stopping", "stopping", &C::stopping, "when a run stops early")),
      number("timeout", &C::timeout, false, "seconds any collective or rendezvous may wait (> 0)"),
      component("topology", "topology", &C::topology, "how an update is exchanged"),
      integer("workers", &C::workers, 1, "training ranks (a parameter server's servers are ranks of their own)"),
  };
  return kFields;
}

nlohmann::json RunField::value_json(const RunConfig& run) const {
  switch (type) {
    case Type::Component:
      return (run.*component).to_json();
    case Type::Int:
      return run.*integer;
    case Type::Number:
      return run.*number;
    case Type::Choice:
      return get_choice(run);
  }
  return nullptr;
}

void RunField::set_from_json(RunConfig& run, const nlohmann::json& json) const {
  switch (type) {
    case Type::Component:
      run.*component = ComponentSpec::from_json(kind, json);
      return;
    case Type::Int:
      run.*integer = json.get<std::int64_t>();
      return;
    case Type::Number:
      run.*number = json.get<double>();
      return;
    case Type::Choice:
      set_choice(run, json.get<std::string>());
      return;
  }
}

bool RunField::at_default(const RunConfig& run) const {
  static const RunConfig kDefaults;
  return value_json(run) == value_json(kDefaults);
}

nlohmann::json RunConfig::to_json() const {
  nlohmann::json out;
  out["experiment"] = experiment;
  out["name"] = name;
  for (const RunField& field : fields())
    if (field.recorded_at_default || !field.at_default(*this)) out[field.key] = field.value_json(*this);
  out["swept"] = swept_json();
  return out;
}

nlohmann::json RunConfig::swept_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : swept) out[key] = value_to_json(value);
  return out;
}

std::string RunConfig::configuration_key() const { return laconic::configuration_key(experiment, swept_json()); }

bool RunConfig::is_baseline() const {
  static const RunConfig kDefaults;
  if (baseline.to_json() == kDefaults.baseline.to_json()) return compressor.name == kDefaults.baseline.name;
  return compressor.to_json() == baseline.to_json();
}

std::string configuration_key(const std::string& experiment, nlohmann::json swept) {
  if (swept.is_object()) swept.erase(kSeedVariable);
  return experiment + "\n" + swept.dump();
}

RunConfig RunConfig::from_json(const nlohmann::json& json) {
  try {
    RunConfig c;
    c.experiment = json.at("experiment").get<std::string>();
    c.name = json.at("name").get<std::string>();
    for (const RunField& field : fields()) {
      if (field.optional_in_record && !json.contains(field.key)) continue;
      field.set_from_json(c, json.at(field.key));
    }
    for (const auto& [key, value] : json.at("swept").items()) c.swept[key] = value_from_json(value);
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("malformed run configuration: ") + e.what());
  }
}

}  // namespace laconic
