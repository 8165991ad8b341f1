#include "engine/train/models/objective.hpp"

#include <cmath>

#include "engine/core/error.hpp"

namespace laconic::train {

torch::Tensor training_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  if (targets.dim() == 2)
    return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
  return torch::nn::functional::cross_entropy(logits, targets);
}

double perplexity(double mean_cross_entropy) { return std::exp(mean_cross_entropy); }

double bits_per_byte(double mean_cross_entropy, double bytes_per_token) {
  return mean_cross_entropy / (std::log(2.0) * bytes_per_token);
}

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out;
  for (const std::int64_t d : shape) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

}  // namespace

void check_compatible(const Model& model, const Dataset& dataset) {
  const std::int64_t model_tokens = model.sequence_length();
  const std::int64_t data_tokens = dataset.sequence_length();
  if (model_tokens == 0 && data_tokens > 0)
    throw ConfigError(str_cat("model ", model.name(), " classifies whole examples, but dataset ", dataset.name(),
                              " holds token sequences for next-token prediction; "
                              "use a language model (gpt, lstm_lm)"));
  if (model_tokens > 0 && data_tokens == 0)
    throw ConfigError(str_cat("model ", model.name(), " is a language model, but dataset ", dataset.name(),
                              " holds classification examples; use a token "
                              "dataset (perldoc, text)"));
  if (model_tokens != data_tokens)
    throw ConfigError(str_cat(model.name(), ".", model.sequence_field(), " = ", model_tokens, " but ", dataset.name(),
                              ".", dataset.sequence_field(), " = ", data_tokens,
                              ": set the same number of tokens per example on both"));
  const std::int64_t outputs = model.outputs();
  if (outputs > 0 && outputs != dataset.classes())
    throw ConfigError(str_cat("model ", model.name(), " has ", outputs, " outputs but dataset ", dataset.name(),
                              " has ", dataset.classes(), model_tokens > 0 ? " tokens in its vocabulary" : " classes",
                              ": set ", model.outputs_setting(dataset.classes())));
  const auto shape = dataset.example_shape();
  try {
    model.check_input(shape);
  } catch (Error& e) {
    e.add_context(
        str_cat("model ", model.name(), " on dataset ", dataset.name(), " (examples ", shape_text(shape), ")"));
    throw;
  }
}

}  // namespace laconic::train
