#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace laconic::train {

/// A trainable network. Parameters are registered the usual LibTorch way, each tensor once
/// (a tied weight is one parameter used twice, never registered under two names).
class Model : public torch::nn::Module {
 public:
  virtual std::string name() const = 0;
  /// Logits [N, classes] for inputs [N, ...]; a language model gives [N, T, vocab] for tokens
  /// [N, T].
  virtual torch::Tensor forward(torch::Tensor inputs) = 0;
  /// Logits per example (classes) or per position (vocabulary size); 0 when not declared.
  virtual std::int64_t outputs() const { return 0; }
  /// How the user sets the outputs to `wanted`, naming the model's real field:
  /// "lenet5.classes = 10" (the default uses classes, or vocab for a language model).
  virtual std::string outputs_setting(std::int64_t wanted) const {
    return name() + (sequence_length() > 0 ? ".vocab = " : ".classes = ") + std::to_string(wanted);
  }
  /// Tokens per example a language model predicts (its bptt); 0 for a classifier.
  virtual std::int64_t sequence_length() const { return 0; }
  /// The field that sets sequence_length(), for messages: "bptt" (lstm_lm), "context" (gpt).
  virtual std::string sequence_field() const { return "bptt"; }
  /// Throws ConfigError, naming the model's field, when examples of `shape` (one example, no
  /// batch dimension: {1, 28, 28}, {3, 32, 32}) do not fit. An empty shape is unknown: accepted.
  virtual void check_input(const std::vector<std::int64_t>& shape) const { (void)shape; }
};

}  // namespace laconic::train
