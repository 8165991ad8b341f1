#pragma once
// A model written in PyTorch, scripted or traced and saved there (torch.jit.save), trained by
// laconic's workers like a built-in model (docs/models-and-data.md, "Your own model").
#include <string>
#include <vector>

#include <torch/script.h>

#include "engine/core/option_fields.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

struct TorchScriptOptions {
  std::string file;
  std::vector<std::int64_t> input;
  std::int64_t classes = 10;
  std::int64_t bptt = 0;

  static OptionFields<TorchScriptOptions> fields();
};

/// A TorchScript module as a Model. Its trainable parameters are registered as this module's
/// parameters and everything else it holds (batch-norm statistics, frozen parameters) as
/// buffers, as the same tensors, not copies: the worker's flat gradient buffer, the optimizer,
/// checkpoints and replica hashes see them as they see a built-in model's. Its weights are the
/// file's (the run's seed does not draw them). train()/eval() reach the module (dropout, batch
/// norm). ConfigError when the file does not load, holds no trainable parameter, or (check_input)
/// does not turn one example into `classes` logits.
class TorchScriptModel : public Model {
 public:
  explicit TorchScriptModel(TorchScriptOptions options);
  std::string name() const override { return "torchscript"; }
  torch::Tensor forward(torch::Tensor inputs) override;
  std::int64_t outputs() const override { return options_.classes; }
  std::int64_t sequence_length() const override { return options_.bptt; }
  std::string outputs_setting(std::int64_t wanted) const override {
    return "torchscript.classes = " + std::to_string(wanted);
  }
  /// Runs one example of `shape` (zeros; tokens for a language model) through the module in
  /// eval mode and checks the logits' shape.
  void check_input(const std::vector<std::int64_t>& shape) const override;
  void train(bool on = true) override;

 private:
  TorchScriptOptions options_;
  mutable torch::jit::Module module_;  // forward() of a TorchScript module is not const
};

}  // namespace laconic::train
