#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

struct GptOptions {
  std::int64_t layers = 4;
  std::int64_t heads = 4;
  std::int64_t embed = 160;
  std::int64_t context = 128;
  std::int64_t vocab = 256;
  double dropout = 0.0;
  bool tied = true;
  bool bias = true;

  static OptionFields<GptOptions> fields();
};

/// Trainable parameters of a gpt built from `options`, counted from the shapes (no LibTorch):
/// what `laconic list models` says and what the built model's parameters() add up to.
std::int64_t gpt_parameters(const GptOptions& options);

/// A decoder-only transformer language model, GPT-2's (Radford et al. 2019) as nanoGPT writes
/// it: token and learned position embeddings, `layers` pre-LayerNorm blocks of causal multi-head
/// self-attention and a 4x GELU MLP (exact GELU, PyTorch's nn.GELU), a final LayerNorm, and a
/// head that is the token embedding's weight when `tied` (else a bias-free linear of its own).
/// GPT-2's initialisation: every linear and embedding weight normal(0, 0.02), the residual
/// projections' normal(0, 0.02 / sqrt(2 layers)), biases 0, LayerNorms 1 and 0. `bias = false`
/// drops the biases of every linear and LayerNorm. Tokens [N, T] (T <= context) give logits
/// [N, T, vocab]. The twin in tests/python/gpt_twin.py is the same network in PyTorch, with the
/// same parameter names.
class Gpt : public Model {
 public:
  explicit Gpt(GptOptions options);
  std::string name() const override { return "gpt"; }
  torch::Tensor forward(torch::Tensor tokens) override;
  std::int64_t outputs() const override { return options_.vocab; }
  std::int64_t sequence_length() const override { return options_.context; }
  std::string sequence_field() const override { return "context"; }

 private:
  struct Block {
    torch::Tensor ln1_weight, ln1_bias, attn_weight, attn_bias, proj_weight, proj_bias;
    torch::Tensor ln2_weight, ln2_bias, fc_weight, fc_bias, out_weight, out_bias;
  };
  Block make_block(std::int64_t index);
  torch::Tensor attention(const Block& block, const torch::Tensor& x) const;
  torch::Tensor dropout(const torch::Tensor& x) const;

  GptOptions options_;
  torch::Tensor token_embedding_, position_embedding_, ln_f_weight_, ln_f_bias_;
  torch::Tensor head_weight_;  ///< undefined when tied: the token embedding's weight is used
  std::vector<Block> blocks_;
  torch::Tensor causal_mask_;  ///< [context, context]: 0 on and below the diagonal, -inf above; not a parameter
};

}  // namespace laconic::train
