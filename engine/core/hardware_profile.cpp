#include "engine/core/hardware_profile.hpp"

#include <fstream>
#include <sstream>

#include "engine/core/error.hpp"
#include "engine/core/units.hpp"

namespace laconic {
namespace {

using nlohmann::json;

/// Reads one object's fields, naming the file and the field's path in every error.
class Reader {
 public:
  Reader(const json& object, std::string origin, std::string path)
      : object_(object), origin_(std::move(origin)), path_(std::move(path)) {
    if (!object_.is_object()) fail("", "must be an object");
  }

  bool has(const char* key) const { return object_.contains(key); }

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    const std::string field = where(key);
    throw ConfigError(str_cat("hardware profile ", origin_, ": ", field.empty() ? "the file" : field, " ", why,
                              " (docs/hardware.md)"));
  }

  const json& at(const char* key) const {
    if (!has(key)) fail(key, "is missing");
    return object_.at(key);
  }

  std::string text(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!object_.at(key).is_string()) fail(key, "must be a string");
    return object_.at(key).get<std::string>();
  }

  std::int64_t count(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0) fail(key, "must be an integer >= 0");
    return v.get<std::int64_t>();
  }

  /// Seconds: a number, or a text such as "3.1ms" or "0.4ns". Absent: `fallback`.
  double seconds(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = object_.at(key);
    double s = 0;
    if (v.is_number())
      s = v.get<double>();
    else if (v.is_string())
      s = parse_duration(str_cat("hardware profile ", origin_, ": ", where(key)), v.get<std::string>());
    else
      fail(key, "must be seconds (a number) or a duration such as \"3.1ms\"");
    if (!(s >= 0)) fail(key, "must be >= 0");
    return s;
  }

  /// The field's path in the file: "models[0].forward".
  std::string where(const std::string& key) const {
    return key.empty() ? path_ : (path_.empty() ? key : path_ + "." + key);
  }

  Reader child(const json& object, const std::string& name) const {
    return Reader(object, origin_, path_.empty() ? name : path_ + "." + name);
  }

 private:
  const json& object_;
  std::string origin_;
  std::string path_;
};

CodecCost codec_cost(const Reader& r) { return {r.seconds("per_call", 0), r.seconds("per_element", 0)}; }

ModelStepCost model_cost(const Reader& r) {
  ModelStepCost m;
  // "" (as by_hand writes it): every run's model, whatever its batch size and parameter count.
  if (!r.has("model")) r.fail("model", "is missing: laconic's model name (\"lenet5\", \"resnet\", ...)");
  m.model = r.text("model", "");
  m.batch_size = r.count("batch_size");
  m.parameters = r.count("parameters");
  m.forward = r.seconds("forward", -1);
  m.backward = r.seconds("backward", -1);
  m.optimizer = r.seconds("optimizer", 0);
  if (m.forward < 0) r.fail("forward", "is missing");
  if (m.backward < 0) r.fail("backward", "is missing");
  if (r.has("gradient_ready")) {
    const json& list = r.at("gradient_ready");
    if (!list.is_array()) r.fail("gradient_ready", "must be a list of {after, elements}");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Reader e = r.child(list[i], str_cat("gradient_ready[", i, "]"));
      m.ready.push_back({e.seconds("after", 0), e.count("elements")});
    }
  }
  return m;
}

std::map<std::string, CompressorCost> compressor_costs(const Reader& r) {
  const json& table = r.at("compressors");
  if (!table.is_object()) r.fail("compressors", "must be an object of compressor names");
  std::map<std::string, CompressorCost> costs;
  for (const auto& [name, fields] : table.items()) {
    const Reader c = r.child(fields, "compressors." + name);
    CompressorCost cost;
    if (c.has("compress")) cost.compress = codec_cost(c.child(c.at("compress"), "compress"));
    if (c.has("decompress")) cost.decompress = codec_cost(c.child(c.at("decompress"), "decompress"));
    costs.emplace(name, cost);
  }
  return costs;
}

json read_json_file(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) throw ConfigError(str_cat("cannot read ", what, " '", path, "'"));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw ConfigError(str_cat(what, " '", path, "' is not JSON: ", e.what()));
  }
}

}  // namespace

double ModelStepCost::ready_after(std::int64_t elements) const {
  std::int64_t sum = 0;
  for (const GradientReady& r : ready) {
    sum += r.elements;
    if (sum >= elements) return r.after;
  }
  return backward;
}

const ModelStepCost* HardwareProfile::model(const std::string& name, std::int64_t batch_size,
                                            std::int64_t parameters) const {
  for (const ModelStepCost& m : models)
    if (m.model == name && m.batch_size == batch_size && m.parameters == parameters) return &m;
  for (const ModelStepCost& m : models)
    if (m.model.empty()) return &m;  // written in the experiment for every run's model
  return nullptr;
}

const CompressorCost* HardwareProfile::compressor(const std::string& name) const {
  const auto it = compressors.find(name);
  return it == compressors.end() ? nullptr : &it->second;
}

std::string HardwareProfile::models_text() const {
  std::string out;
  for (const ModelStepCost& m : models)
    out += m.model.empty() ? str_cat(out.empty() ? "" : ", ", "every run's model")
                           : str_cat(out.empty() ? "" : ", ", m.model, " (batch ", m.batch_size, ", ", m.parameters,
                                     " parameters)");
  return out.empty() ? "no model" : out;
}

HardwareProfile hardware_profile_from_json(const json& document, const std::string& origin) {
  const Reader r(document, origin, "");
  const std::int64_t version = r.count("laconic_hardware_profile");
  if (version != kHardwareProfileVersion)
    r.fail("laconic_hardware_profile",
           str_cat("is ", version, "; this laconic reads version ", kHardwareProfileVersion));
  HardwareProfile p;
  p.origin = origin;
  p.name = r.text("name", "");
  if (p.name.empty()) r.fail("name", "is missing: the hardware, as the report should name it");
  p.device = r.text("device", "");
  if (r.has("measured")) p.measured = r.at("measured");
  if (r.has("models")) {
    const json& list = r.at("models");
    if (!list.is_array()) r.fail("models", "must be a list");
    for (std::size_t i = 0; i < list.size(); ++i)
      p.models.push_back(model_cost(r.child(list[i], str_cat("models[", i, "]"))));
  }
  if (r.has("compressors")) p.compressors = compressor_costs(r);
  return p;
}

HardwareProfile read_hardware_profile(const std::string& path) {
  return hardware_profile_from_json(read_json_file(path, "hardware profile"), path);
}

json hardware_profile_to_json(const HardwareProfile& p) {
  const auto codec = [](const CodecCost& c) { return json{{"per_call", c.per_call}, {"per_element", c.per_element}}; };
  json models = json::array();
  for (const ModelStepCost& m : p.models) {
    json ready = json::array();
    for (const GradientReady& r : m.ready) ready.push_back({{"after", r.after}, {"elements", r.elements}});
    models.push_back({{"model", m.model},
                      {"batch_size", m.batch_size},
                      {"parameters", m.parameters},
                      {"forward", m.forward},
                      {"backward", m.backward},
                      {"optimizer", m.optimizer},
                      {"gradient_ready", ready}});
  }
  json compressors = json::object();
  for (const auto& [name, cost] : p.compressors)
    compressors[name] = {{"compress", codec(cost.compress)}, {"decompress", codec(cost.decompress)}};
  return {{"laconic_hardware_profile", kHardwareProfileVersion},
          {"name", p.name},
          {"device", p.device},
          {"measured", p.measured},
          {"models", models},
          {"compressors", compressors}};
}

HardwareProfile hardware_profile_by_hand(const json& fields, const std::string& compressors_file) {
  const std::string origin = "by_hand { ... }";
  const Reader r(fields, origin, "");
  HardwareProfile p;
  p.origin = origin;
  p.name = r.text("label", "");
  if (p.name.empty()) r.fail("label", "is missing: the hardware, as the report should name it");
  p.measured = {{"by", "written by hand in the experiment"}};
  ModelStepCost step;  // no model name: every run's model, batch size and parameter count
  step.forward = r.seconds("forward", -1);
  step.backward = r.seconds("backward", -1);
  step.optimizer = r.seconds("optimizer", 0);
  if (step.forward < 0) r.fail("forward", "is missing");
  if (step.backward < 0) r.fail("backward", "is missing");
  p.models.push_back(step);
  if (!compressors_file.empty()) {
    const json costs = read_json_file(compressors_file, "compressor costs");
    p.compressors = compressor_costs(Reader(costs, compressors_file, ""));
  }
  return p;
}

}  // namespace laconic
