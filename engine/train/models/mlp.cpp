#include "engine/train/models/mlp.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

torch::Tensor apply_tanh(const torch::Tensor& x) { return torch::tanh(x); }
torch::Tensor apply_relu(const torch::Tensor& x) { return torch::relu(x); }
torch::Tensor apply_sigmoid(const torch::Tensor& x) { return torch::sigmoid(x); }

struct Activation {
  const char* name;
  torch::Tensor (*apply)(const torch::Tensor&);
};
constexpr Activation kActivations[] = {{"tanh", apply_tanh}, {"relu", apply_relu}, {"sigmoid", apply_sigmoid}};

}  // namespace

OptionFields<MlpOptions> MlpOptions::fields() {
  using O = MlpOptions;
  std::vector<std::string> activations;
  for (const auto& a : kActivations) activations.emplace_back(a.name);
  return OptionFields<O>()
      .integers("sizes", &O::sizes, "layer widths: inputs per example, hidden layers..., classes")
      .text("activation", &O::activation, "applied after every layer but the last", activations)
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.sizes.size() < 2)
          throw ConfigError(
              str_cat(spec.name, ".sizes needs at least inputs and classes (2 entries), got ", format_value(o.sizes)));
        for (std::size_t i = 0; i < o.sizes.size(); ++i)
          if (o.sizes[i] < 1)
            throw ConfigError(str_cat(spec.name, ".sizes entries must be >= 1, got ", o.sizes[i], " at position ",
                                      i + 1, " of ", format_value(o.sizes)));
        if (o.sizes.back() < 2)
          throw ConfigError(str_cat(spec.name, ".sizes must end with >= 2 classes, got ", o.sizes.back()));
      });
}

Mlp::Mlp(MlpOptions options) : options_(std::move(options)) {
  for (const auto& a : kActivations)
    if (options_.activation == a.name) activation_ = a.apply;
  LACONIC_ENFORCE(activation_ != nullptr, "unchecked mlp.activation ", options_.activation);
  for (std::size_t i = 0; i + 1 < options_.sizes.size(); ++i)
    layers_.push_back(
        register_module(str_cat("fc", i + 1), torch::nn::Linear(options_.sizes[i], options_.sizes[i + 1])));
}

torch::Tensor Mlp::forward(torch::Tensor x) {
  x = x.flatten(1);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    x = layers_[i]->forward(x);
    if (i + 1 < layers_.size()) x = activation_(x);
  }
  return x;
}

void Mlp::check_input(const std::vector<std::int64_t>& shape) const {
  if (shape.empty()) return;
  std::int64_t values = 1;
  for (const std::int64_t d : shape) values *= d;
  if (values != options_.sizes.front())
    throw ConfigError(str_cat("mlp.sizes starts with ", options_.sizes.front(), " inputs but each example has ", values,
                              " values; make it the first entry of sizes"));
}

std::string Mlp::outputs_setting(std::int64_t wanted) const {
  std::string sizes;
  for (std::size_t i = 0; i < options_.sizes.size(); ++i)
    sizes += (i ? ", " : "") + std::to_string(i + 1 == options_.sizes.size() ? wanted : options_.sizes[i]);
  return "the last entry of mlp.sizes to " + std::to_string(wanted) + " (sizes = {" + sizes + "})";
}

}  // namespace laconic::train
