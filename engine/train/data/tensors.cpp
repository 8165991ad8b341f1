#include "engine/train/data/tensors.hpp"

#include <fstream>
#include <iterator>

#include <torch/serialize.h>

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string shape_of(const torch::Tensor& t) {
  std::string out = "[";
  for (std::int64_t i = 0; i < t.dim(); ++i) out += (i ? ", " : "") + std::to_string(t.size(i));
  return out + "] " + std::string(c10::toString(t.scalar_type()));
}

// The dict a torch.save wrote, as a split: inputs float32 (int64 tokens), labels int64.
DataSplit read_split(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(str_cat("tensors.", field, ": cannot open '", path,
                              "' (torch.save({\"inputs\": ..., "
                              "\"labels\": ...}, \"",
                              path, "\") writes one)"));
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    throw ConfigError(
        str_cat("tensors.", field, ": '", path, "' is not a file torch.save wrote: ", first_line(e.what())));
  }
  if (!value.isGenericDict())
    throw ConfigError(str_cat("tensors.", field, ": '", path, "' holds a ", value.tagKind(),
                              ", expected a dict with \"inputs\" and \"labels\""));
  const auto dict = value.toGenericDict();
  auto tensor = [&](const char* key) {
    const auto it = dict.find(c10::IValue(std::string(key)));
    if (it == dict.end() || !it->value().isTensor())
      throw ConfigError(str_cat("tensors.", field, ": '", path, "' has no tensor \"", key,
                                "\" (the dict needs \"inputs\" and \"labels\")"));
    return it->value().toTensor().contiguous();
  };
  DataSplit split{tensor("inputs"), tensor("labels")};
  const bool tokens = !split.inputs.is_floating_point();
  if (split.inputs.dim() < 1 || split.labels.dim() < 1 || split.inputs.size(0) != split.labels.size(0) ||
      split.inputs.size(0) == 0)
    throw ConfigError(str_cat("tensors.", field, ": '", path, "': inputs ", shape_of(split.inputs), " and labels ",
                              shape_of(split.labels), " must hold the same number of examples (> 0) in dimension 0"));
  if (split.labels.is_floating_point() || split.labels.scalar_type() == torch::kBool)
    throw ConfigError(str_cat("tensors.", field, ": '", path, "': labels ", shape_of(split.labels),
                              " must be integers (class indices, or next tokens)"));
  if (tokens && (split.inputs.dim() != 2 || split.labels.sizes() != split.inputs.sizes()))
    throw ConfigError(str_cat("tensors.", field, ": '", path,
                              "': integer inputs are tokens of a language model and need "
                              "inputs and labels [N, T] alike, got ",
                              shape_of(split.inputs), " and ", shape_of(split.labels),
                              " (images must be a floating type)"));
  if (!tokens && split.labels.dim() != 1)
    throw ConfigError(str_cat("tensors.", field, ": '", path, "': labels ", shape_of(split.labels),
                              " must be [N], one class per example"));
  split.inputs = split.inputs.to(tokens ? torch::kInt64 : torch::kFloat32);
  split.labels = split.labels.to(torch::kInt64);
  if (split.labels.min().item<std::int64_t>() < 0)
    throw ConfigError(str_cat("tensors.", field, ": '", path, "': a label is negative (",
                              split.labels.min().item<std::int64_t>(), ")"));
  return split;
}

}  // namespace

OptionFields<TensorsOptions> TensorsOptions::fields() {
  using O = TensorsOptions;
  return OptionFields<O>()
      .text("train", &O::train,
            "the training split: a file of torch.save({\"inputs\": ..., \"labels\": ...}), relative to the "
            "experiment file")
      .relative_to_file()
      .text("test", &O::test, "the test split, the same way")
      .relative_to_file()
      .integer("classes", &O::classes,
               "classes (a language model: vocabulary size); 0 = the training split's largest label + 1", at_least(0))
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.train.empty() || o.test.empty())
          throw ConfigError(str_cat(spec.name,
                                    " needs train = \"FILE\" and test = \"FILE\", each written by "
                                    "torch.save({\"inputs\": ..., \"labels\": ...}, FILE)"));
        if (o.classes == 1) throw out_of_range(spec, "classes", "0 or >= 2", "1");
      });
}

const DataSplit& TensorsDataset::loaded_train() const {
  if (!train_) train_ = read_split(options_.train, "train");
  return *train_;
}

const DataSplit& TensorsDataset::train() {
  const DataSplit& split = loaded_train();
  const std::int64_t largest = split.labels.max().item<std::int64_t>();
  if (largest >= classes())
    throw ConfigError(
        str_cat("tensors.train: '", options_.train, "' has label ", largest, " but classes = ", classes()));
  return split;
}

const DataSplit& TensorsDataset::test() {
  if (!test_) {
    DataSplit split = read_split(options_.test, "test");
    const DataSplit& train = loaded_train();
    auto example = [](const DataSplit& s) { return s.inputs.sizes().slice(1).vec(); };
    if (example(split) != example(train) || split.inputs.scalar_type() != train.inputs.scalar_type())
      throw ConfigError(str_cat("tensors.test: '", options_.test, "' holds examples ", shape_of(split.inputs),
                                ", unlike the training split's ", shape_of(train.inputs)));
    const std::int64_t largest = split.labels.max().item<std::int64_t>();
    if (largest >= classes())
      throw ConfigError(str_cat("tensors.test: '", options_.test, "' has label ", largest, " but classes = ", classes(),
                                options_.classes == 0 ? " (the training split's largest label + 1)" : ""));
    test_ = std::move(split);
  }
  return *test_;
}

std::int64_t TensorsDataset::classes() const {
  if (options_.classes > 0) return options_.classes;
  return loaded_train().labels.max().item<std::int64_t>() + 1;
}

std::vector<std::int64_t> TensorsDataset::example_shape() const { return loaded_train().inputs.sizes().slice(1).vec(); }

std::int64_t TensorsDataset::sequence_length() const {
  const DataSplit& split = loaded_train();
  return split.inputs.is_floating_point() ? 0 : split.inputs.size(1);
}

}  // namespace laconic::train
