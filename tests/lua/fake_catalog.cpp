#include "fake_catalog.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "engine/core/error.hpp"

namespace laconic::lua::testing {

FakeCatalog::FakeCatalog() {
  using T = FieldType;
  add({"dataset", "fashion_mnist", "Fashion-MNIST", {}});
  add({"model", "lenet5", "LeNet-5", {}});
  add({"model",
       "mlp",
       "multilayer perceptron",
       {{"sizes", T::IntList, std::vector<std::int64_t>{784, 10}, "layer widths"}}});
  add({"optimizer",
       "sgd",
       "SGD with momentum",
       {{"lr", T::Number, 0.01, "learning rate"}, {"momentum", T::Number, 0.0, "momentum"}}});
  add({"topology", "allreduce", "allreduce", {{"algorithm", T::String, std::string("ring"), ""}}});
  add({"schedule", "synchronous", "synchronous SGD", {}});
  add({"compressor", "none", "no compression", {}});
  add({"compressor",
       "topk",
       "Top-k sparsification",
       {{"ratio", T::Number, 0.01, "fraction kept", /*per_step=*/true},
        {"error_feedback", T::Bool, true, "accumulate what was dropped"}}});
  add({"lr_schedule", "constant", "constant", {}});
  add({"lr_schedule", "lua_function", "a Lua function", {}, true});
  add({"stopping", "never", "never", {}});
  add({"placement", "processes", "a process per rank", {}});
  add({"placement", "threads", "threads of one process", {}});
  add({"hardware", "measured", "no projection", {}});
  add({"churn", "calm", "no change", {}});
  add({"device", "cpu", "the CPU", {}});
  add({"network",
       "link",
       "a link",
       {{"bandwidth", T::String, std::string("1Gbit"), "rate"},
        {"latency", T::String, std::string("50us"), "latency"}}});
  add({"compressor",
       "chain",
       "a compressor after another",
       {{"first", T::Component, nested(ComponentSpec{"compressor", "topk", {}}), "sparsifier"},
        {"second", T::Component, nested(ComponentSpec{"compressor", "none", {}}), "codec"}}});
}

void FakeCatalog::add(ComponentInfo info) {
  if (std::find(kinds_.begin(), kinds_.end(), info.kind) == kinds_.end()) kinds_.push_back(info.kind);
  auto& entries = infos_[info.kind];
  entries.push_back(std::move(info));
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

std::vector<std::string> FakeCatalog::kinds() const { return kinds_; }

std::vector<ComponentInfo> FakeCatalog::infos(const std::string& kind) const {
  auto it = infos_.find(kind);
  return it == infos_.end() ? std::vector<ComponentInfo>{} : it->second;
}

ComponentSpec FakeCatalog::resolve(const ComponentSpec& spec) const {
  std::string known;
  for (const ComponentInfo& info : infos(spec.kind)) {
    if (info.name != spec.name) {
      known += (known.empty() ? "" : ", ") + info.name;
      continue;
    }
    ComponentSpec out = info.resolve(spec);
    if (out.name == "topk" && !std::holds_alternative<StepFunction>(out.at("ratio"))) {
      const double ratio = out.number("ratio");
      if (!(ratio > 0 && ratio <= 1)) throw ConfigError(str_cat("topk.ratio must be in (0, 1], got ", ratio));
    }
    return out;
  }
  throw ConfigError(str_cat("unknown ", spec.kind, " '", spec.name, "'; known: ", known));
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = (std::filesystem::temp_directory_path() / str_cat("laconic-lua-", ::getpid(), "-", counter++)).string();
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const std::string file = path_ + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path());
  std::ofstream out(file, std::ios::binary);
  out << text;
  return file;
}

std::string load_error(const std::string& path, const Catalog& catalog, const LoadOptions& options) {
  try {
    load_experiment(path, catalog, options);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace laconic::lua::testing
