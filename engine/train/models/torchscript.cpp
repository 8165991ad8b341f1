#include "engine/train/models/torchscript.hpp"

#include <algorithm>
#include <set>

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

// LibTorch's errors carry a C++ backtrace after their first line.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string bracketed_sizes(c10::IntArrayRef sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// nn::Module refuses dots in names; TorchScript's are dotted paths ("conv1.weight").
std::string local_name(const std::string& dotted) {
  std::string name = dotted;
  std::replace(name.begin(), name.end(), '.', '/');
  return name;
}

}  // namespace

OptionFields<TorchScriptOptions> TorchScriptOptions::fields() {
  using O = TorchScriptOptions;
  return OptionFields<O>()
      .text("file", &O::file,
            "the TorchScript file (torch.jit.save; scripts/export-torchscript.py writes one), relative to the "
            "experiment file; part of the experiment's hash")
      .relative_to_file(/*hashed=*/true)
      .integers("input", &O::input,
                "shape of one example without the batch dimension, e.g. {1, 28, 28}; {} = the dataset's")
      .integer("classes", &O::classes, "logits per example (a language model: the vocabulary size)", at_least(2))
      .integer("bptt", &O::bptt,
               "0 for a classifier; a language model's tokens per example: [N, bptt] int64 in, [N, bptt, classes] out",
               at_least(0))
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.file.empty())
          throw ConfigError(str_cat(spec.name,
                                    ".file is required: the .pt file a PyTorch model was saved to "
                                    "(python3 scripts/export-torchscript.py MODULE:CLASS --out model.pt)"));
        for (const std::int64_t d : o.input)
          if (d < 1) throw out_of_range(spec, "input", "a list of entries >= 1", format_value(o.input));
      });
}

TorchScriptModel::TorchScriptModel(TorchScriptOptions options) : options_(std::move(options)) {
  try {
    module_ = torch::jit::load(options_.file);
  } catch (const std::exception& e) {
    throw ConfigError(str_cat("torchscript.file '", options_.file,
                              "' cannot be loaded as a TorchScript module: ", first_line(e.what())));
  }
  std::set<std::string> taken;
  auto unique = [&](const std::string& dotted) {
    const std::string name = local_name(dotted);
    if (!taken.insert(name).second)
      throw ConfigError(str_cat("torchscript.file '", options_.file, "': two tensors are both named '", name, "'"));
    return name;
  };
  for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
    if (p.value.requires_grad())
      register_parameter(unique(p.name), p.value);
    else
      register_buffer(unique(p.name), p.value);  // frozen: kept and checkpointed, never trained
  }
  for (const auto& b : module_.named_buffers(/*recurse=*/true)) register_buffer(unique(b.name), b.value);
  if (parameters().empty())
    throw ConfigError(str_cat("torchscript.file '", options_.file,
                              "' has no trainable parameters (none with "
                              "requires_grad)"));
  module_.train(true);
}

torch::Tensor TorchScriptModel::forward(torch::Tensor inputs) {
  const c10::IValue out = module_.forward({std::move(inputs)});
  if (!out.isTensor())
    throw ConfigError(str_cat("torchscript.file '", options_.file, "': forward returns a ", out.tagKind(),
                              ", laconic needs one tensor of logits"));
  return out.toTensor();
}

void TorchScriptModel::train(bool on) {
  Model::train(on);
  module_.train(on);
}

void TorchScriptModel::check_input(const std::vector<std::int64_t>& dataset_shape) const {
  if (!options_.input.empty() && !dataset_shape.empty() && options_.input != dataset_shape)
    throw ConfigError(str_cat("torchscript.input = ", format_value(options_.input), " but the dataset's examples are ",
                              format_value(dataset_shape)));
  std::vector<std::int64_t> shape = dataset_shape.empty() ? options_.input : dataset_shape;
  if (shape.empty()) {
    if (options_.bptt == 0) return;  // nothing says what an example looks like
    shape = {options_.bptt};
  }
  shape.insert(shape.begin(), 1);
  const torch::Tensor example = options_.bptt > 0 ? torch::zeros(shape, torch::kInt64) : torch::zeros(shape);
  std::vector<std::int64_t> expected{1, options_.classes};
  if (options_.bptt > 0) expected = {1, options_.bptt, options_.classes};
  const bool was_training = module_.is_training();
  module_.train(false);
  c10::IValue out;
  try {
    torch::NoGradGuard no_grad;
    out = module_.forward({example});
  } catch (const std::exception& e) {
    module_.train(was_training);
    throw ConfigError(str_cat("torchscript.file '", options_.file, "': forward of one example ", bracketed_sizes(shape),
                              " failed: ", first_line(e.what())));
  }
  module_.train(was_training);
  if (!out.isTensor() || out.toTensor().sizes().vec() != expected)
    throw ConfigError(str_cat("torchscript.file '", options_.file, "' turns one example ", bracketed_sizes(shape), " into ",
                              out.isTensor() ? bracketed_sizes(out.toTensor().sizes()) : out.tagKind(), ", expected logits ",
                              bracketed_sizes(expected), " (torchscript.classes = ", options_.classes,
                              options_.bptt > 0 ? str_cat(", bptt = ", options_.bptt) : "", ")"));
}

}  // namespace laconic::train
