#include "engine/train/models/gpt.hpp"

#include <cmath>
#include <limits>

#include "engine/core/error.hpp"

namespace laconic::train {

OptionFields<GptOptions> GptOptions::fields() {
  using O = GptOptions;
  return OptionFields<O>()
      .integer("layers", &O::layers, "transformer blocks", at_least(1))
      .integer("heads", &O::heads, "attention heads per block; must divide embed", at_least(1))
      .integer("embed", &O::embed, "width of the embeddings and of every block", at_least(1))
      .integer("context", &O::context, "tokens per example (the longest sequence attended over); must equal the "
                                       "dataset's context", at_least(1))
      .integer("vocab", &O::vocab, "vocabulary size; must equal the dataset's (256 for byte tokens)", at_least(2))
      .number("dropout", &O::dropout, "dropout probability after the embeddings, on the attention weights and on "
                                      "each residual branch", closed_open(0, 1))
      .flag("tied", &O::tied, "the output head is the token embedding's weight (GPT-2)")
      .flag("bias", &O::bias, "biases in every linear layer and LayerNorm (false: none, as in nanoGPT's bias = False)")
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.embed % o.heads != 0)
          throw ConfigError(str_cat(spec.name, ".heads = ", o.heads, " must divide ", spec.name, ".embed = ", o.embed,
                                    "; each head attends over embed / heads channels"));
      });
}

std::int64_t gpt_parameters(const GptOptions& o) {
  const std::int64_t d = o.embed, b = o.bias ? 1 : 0;
  const std::int64_t norm = d + b * d;
  const std::int64_t block = 2 * norm + (3 * d * d + b * 3 * d) + (d * d + b * d) + (4 * d * d + b * 4 * d) +
                             (4 * d * d + b * d);
  return o.vocab * d + o.context * d + o.layers * block + norm + (o.tied ? 0 : o.vocab * d);
}

namespace {

// GPT-2's initialisation of a weight: normal(0, std).
torch::Tensor normal_weight(std::vector<std::int64_t> shape, double std) {
  return torch::empty(shape).normal_(0.0, std);
}

}  // namespace

Gpt::Gpt(GptOptions options) : options_(options) {
  torch::NoGradGuard no_grad;
  const std::int64_t d = options_.embed;
  constexpr double kStd = 0.02;
  token_embedding_ = register_parameter("wte", normal_weight({options_.vocab, d}, kStd));
  position_embedding_ = register_parameter("wpe", normal_weight({options_.context, d}, kStd));
  for (std::int64_t i = 0; i < options_.layers; ++i) blocks_.push_back(make_block(i));
  ln_f_weight_ = register_parameter("ln_f_weight", torch::ones({d}));
  if (options_.bias) ln_f_bias_ = register_parameter("ln_f_bias", torch::zeros({d}));
  // Tied: one parameter used twice; registering it again would exchange and step it twice.
  if (!options_.tied) head_weight_ = register_parameter("head_weight", normal_weight({options_.vocab, d}, kStd));
  causal_mask_ = torch::full({options_.context, options_.context}, -std::numeric_limits<float>::infinity())
                     .triu(1);
}

Gpt::Block Gpt::make_block(std::int64_t index) {
  const std::int64_t d = options_.embed;
  const double std = 0.02, residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(options_.layers));
  const std::string at = str_cat("h", index, "_");
  auto weight = [&](const char* name, std::vector<std::int64_t> shape, double s) {
    return register_parameter(at + name, normal_weight(std::move(shape), s));
  };
  auto filled = [&](const char* name, std::int64_t size, double value) {
    return options_.bias || value != 0.0 ? register_parameter(at + name, torch::full({size}, value)) : torch::Tensor();
  };
  Block b;
  b.ln1_weight = filled("ln1_weight", d, 1.0);
  b.ln1_bias = filled("ln1_bias", d, 0.0);
  b.attn_weight = weight("attn_weight", {3 * d, d}, std);
  b.attn_bias = filled("attn_bias", 3 * d, 0.0);
  b.proj_weight = weight("proj_weight", {d, d}, residual_std);
  b.proj_bias = filled("proj_bias", d, 0.0);
  b.ln2_weight = filled("ln2_weight", d, 1.0);
  b.ln2_bias = filled("ln2_bias", d, 0.0);
  b.fc_weight = weight("fc_weight", {4 * d, d}, std);
  b.fc_bias = filled("fc_bias", 4 * d, 0.0);
  b.out_weight = weight("out_weight", {d, 4 * d}, residual_std);
  b.out_bias = filled("out_bias", d, 0.0);
  return b;
}

torch::Tensor Gpt::dropout(const torch::Tensor& x) const {
  return options_.dropout > 0 ? torch::dropout(x, options_.dropout, is_training()) : x;
}

torch::Tensor Gpt::attention(const Block& b, const torch::Tensor& x) const {
  namespace F = torch::nn::functional;
  const std::int64_t batch = x.size(0), tokens = x.size(1), d = options_.embed, heads = options_.heads;
  const std::int64_t width = d / heads;
  const auto qkv = F::linear(x, b.attn_weight, b.attn_bias).split(d, 2);
  auto per_head = [&](const torch::Tensor& t) { return t.view({batch, tokens, heads, width}).transpose(1, 2); };
  // Scaled on q ([N, T, d]) rather than on the scores ([N, heads, T, T]): fewer multiplications.
  const auto q = per_head(qkv[0]) * (1.0 / std::sqrt(static_cast<double>(width)));
  const auto k = per_head(qkv[1]);
  const auto v = per_head(qkv[2]);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) + causal_mask_.narrow(0, 0, tokens).narrow(1, 0, tokens);
  const auto weights = dropout(torch::softmax(scores, -1));
  const auto y = torch::matmul(weights, v).transpose(1, 2).contiguous().view({batch, tokens, d});
  return F::linear(y, b.proj_weight, b.proj_bias);
}

torch::Tensor Gpt::forward(torch::Tensor tokens) {
  const std::int64_t length = tokens.size(1), d = options_.embed;
  LACONIC_ENFORCE(length <= options_.context, "gpt: sequences of ", length, " tokens, context ", options_.context);
  // Not a parameter or buffer (so checkpoints and hashes are as before): it follows the model's device here.
  if (causal_mask_.device() != token_embedding_.device()) causal_mask_ = causal_mask_.to(token_embedding_.device());
  auto x = dropout(torch::embedding(token_embedding_, tokens) + position_embedding_.narrow(0, 0, length));
  for (const Block& b : blocks_) {
    x = x + dropout(attention(b, torch::layer_norm(x, {d}, b.ln1_weight, b.ln1_bias)));
    const auto hidden = torch::gelu(torch::nn::functional::linear(torch::layer_norm(x, {d}, b.ln2_weight, b.ln2_bias),
                                                                  b.fc_weight, b.fc_bias));
    x = x + dropout(torch::nn::functional::linear(hidden, b.out_weight, b.out_bias));
  }
  x = torch::layer_norm(x, {d}, ln_f_weight_, ln_f_bias_);
  return torch::nn::functional::linear(x, options_.tied ? token_embedding_ : head_weight_);
}

}  // namespace laconic::train
