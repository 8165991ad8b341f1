#include "lua/sweep.hpp"

#include <map>
#include <set>

#include "engine/core/error.hpp"
#include "lua/fields.hpp"

namespace laconic::lua {

namespace {

/// One experiment field with the alternatives it takes.
struct Axis {
  const ExperimentField* field;
  std::vector<Choice> alternatives;
  bool swept;
  std::string group;
};

/// Axes that turn together: one ungrouped axis, or every axis of one sweep group.
struct Unit {
  std::vector<std::size_t> axes;
  std::size_t length = 0;
};

std::vector<Unit> make_units(const std::vector<Axis>& axes) {
  std::vector<Unit> units;
  std::map<std::string, std::size_t> unit_of_group;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const Axis& axis = axes[a];
    if (!axis.group.empty()) {
      auto [it, fresh] = unit_of_group.emplace(axis.group, units.size());
      if (!fresh) {
        Unit& unit = units[it->second];
        const Axis& first = axes[unit.axes.front()];
        if (axis.alternatives.size() != unit.length)
          throw ConfigError(str_cat("sweeps of group '", axis.group, "' are paired and need ",
                                    "the same number of alternatives: '", first.field->name, "' has ", unit.length,
                                    ", '", axis.field->name, "' has ", axis.alternatives.size()));
        unit.axes.push_back(a);
        continue;
      }
    }
    units.push_back({{a}, axis.alternatives.size()});
  }
  return units;
}

Component default_component(const ExperimentField& field, const Catalog& catalog) {
  const RunField& run = *field.run;
  for (const ComponentInfo& info : catalog.infos(run.kind)) {
    if (info.name != run.default_component) continue;
    Component component;
    component.written = ComponentSpec{run.kind, info.name, {}};
    component.resolved = catalog.resolve(component.written);
    return component;
  }
  throw ConfigError(str_cat("experiment field '", field.name, "' is required: the catalog has no ", "default ",
                            run.kind, " '", run.default_component, "'"));
}

std::vector<Axis> make_axes(const ExperimentDraft& draft, const Catalog& catalog) {
  std::vector<Axis> axes;
  for (const ExperimentField& field : experiment_fields()) {
    auto given = draft.fields.find(field.name);
    if (given != draft.fields.end())
      axes.push_back({&field, given->second.alternatives, given->second.swept, given->second.group});
    else if (field.type == ExperimentFieldType::Component && field.run->read_by_training)
      axes.push_back({&field, {default_component(field, catalog)}, false, ""});
    // Omitted scalar fields, and fields training never reads, keep RunConfig's defaults.
  }
  return axes;
}

/// Sets one field of the run; records it in `swept` and the name when the axis is swept.
void apply(const Axis& axis, const Choice& choice, RunConfig& run, std::string& name) {
  const ExperimentField& field = *axis.field;
  auto add_name = [&name](const std::string& key, const Value& value) {
    name += (name.empty() ? "" : ",") + key + "=" + format_name_value(value);
  };
  if (const auto* component = std::get_if<Component>(&choice)) {
    run.*field.run->component = component->resolved;
    if (!axis.swept) return;
    run.swept[field.name] = component->written.name;
    // A sweep inside the constructor (sgd { lr = sweep { ... } }) names only what it sweeps.
    const bool inner = !component->swept_fields.empty();
    if (!inner) add_name(field.name, component->written.name);
    for (const std::string& key : inner ? component->swept_fields : component->written_order) {
      // A nested component is named as written (topk{ratio=0.01}), not with every default.
      const Value& written = component->written.fields.at(key);
      const Value& value =
          std::holds_alternative<NestedComponent>(written) ? written : component->resolved.fields.at(key);
      run.swept[str_cat(field.name, ".", key)] = value;
      add_name(key, value);
    }
    return;
  }
  const Value& value = std::get<Value>(choice);
  const RunField& lands_in = *field.run;
  if (lands_in.integer != nullptr) run.*lands_in.integer = std::get<std::int64_t>(value);
  if (lands_in.number != nullptr) run.*lands_in.number = std::get<double>(value);
  if (lands_in.set_choice) lands_in.set_choice(run, std::get<std::string>(value));
  // A choice other than its default says so in the name, swept or not: the name tells which ran.
  const bool named =
      field.type == ExperimentFieldType::Choice && std::get<std::string>(value) != lands_in.choices.front();
  if (!axis.swept && named) add_name(field.name, value);
  if (!axis.swept) return;
  run.swept[field.name] = value;
  add_name(field.name, value);
}

}  // namespace

std::string format_name_value(const Value& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  if (const auto* component = std::get_if<NestedComponent>(&value)) {
    std::string out = component->spec->name + "{";
    for (const auto& [key, v] : component->spec->fields)
      out += str_cat(out.back() == '{' ? "" : ",", key, "=", format_name_value(v));
    return out + "}";
  }
  if (const auto* list = std::get_if<std::vector<double>>(&value)) {
    std::string out = "{";
    for (std::size_t i = 0; i < list->size(); ++i) out += (i == 0 ? "" : ",") + format_name_value(Value{(*list)[i]});
    return out + "}";
  }
  if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) {
    // Without spaces, like a nested component: sizes={784,392,50,10}.
    std::string out = "{";
    for (const std::int64_t i : *list) out += str_cat(out.size() == 1 ? "" : ",", i);
    return out + "}";
  }
  return format_value(value);
}

std::vector<RunConfig> expand_sweeps(const ExperimentDraft& draft, const Catalog& catalog) {
  try {
    const std::vector<Axis> axes = make_axes(draft, catalog);
    const std::vector<Unit> units = make_units(axes);
    const std::vector<std::int64_t> seeds = draft.seeds.empty() ? std::vector<std::int64_t>{1} : draft.seeds;
    // Counted before any run is built: a grid of millions would end in std::bad_alloc.
    double count = static_cast<double>(seeds.size()) * static_cast<double>(draft.runs_per_seed);
    std::string factors = str_cat(seeds.size(), " seeds");
    for (const Unit& unit : units) {
      count *= static_cast<double>(unit.length);
      if (unit.length > 1) factors += str_cat(" x ", unit.length, " (", axes[unit.axes.front()].field->name, ")");
    }
    if (draft.runs_per_seed > 1) factors += str_cat(" x ", draft.runs_per_seed, " (runs_per_seed)");
    if (count > static_cast<double>(kMaxRuns))
      throw ConfigError(str_cat("the sweeps make ", static_cast<std::uint64_t>(count), " runs (", factors,
                                "), more than the ", kMaxRuns,
                                " one experiment may plan; sweep fewer values, or split it into experiments"));
    std::vector<RunConfig> runs;
    std::set<std::string> names;
    // An odometer over the units: the last turns fastest; the axes of a group share a wheel.
    std::vector<std::size_t> position(units.size(), 0);
    std::vector<std::size_t> unit_of_axis(axes.size());
    for (std::size_t u = 0; u < units.size(); ++u)
      for (std::size_t a : units[u].axes) unit_of_axis[a] = u;
    while (true) {
      for (std::int64_t seed : seeds)
        for (std::int64_t repetition = 0; repetition < draft.runs_per_seed; ++repetition) {
          RunConfig run;
          run.experiment = draft.name;
          for (std::size_t a = 0; a < axes.size(); ++a)
            apply(axes[a], axes[a].alternatives[position[unit_of_axis[a]]], run, run.name);
          run.seed = seed;
          // Not a swept variable: a repeat is the same configuration and seed once more.
          run.repetition = repetition;
          run.swept[kSeedVariable] = seed;
          run.name += str_cat(run.name.empty() ? "" : ",", "seed=", seed);
          if (repetition > 0) run.name += str_cat(",repeat=", repetition);
          if (!names.insert(run.name).second)
            throw ConfigError(
                str_cat("two runs would both be named '", run.name, "'; make the alternatives of each sweep differ"));
          runs.push_back(std::move(run));
        }
      std::size_t u = units.size();
      while (u > 0 && ++position[u - 1] == units[u - 1].length) position[--u] = 0;
      if (u == 0) break;
    }
    return runs;
  } catch (ConfigError& e) {
    std::string location = draft.location;
    if (location.size() >= 2 && location.compare(location.size() - 2, 2, ": ") == 0)
      location.resize(location.size() - 2);
    if (!location.empty()) e.add_context(location);
    throw;
  }
}

}  // namespace laconic::lua
