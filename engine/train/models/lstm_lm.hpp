#pragma once
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

struct LstmLmOptions {
  std::int64_t vocab = 10000;
  std::int64_t embed = 100;
  std::int64_t hidden = 100;
  std::int64_t layers = 2;
  double dropout = 0.0;
  bool tied = true;
  std::int64_t bptt = 35;

  static OptionFields<LstmLmOptions> fields();
};

/// Word-level LSTM language model, as used by Harris (2020) for compressed communication:
/// embedding, `layers` stacked LSTMs, linear decoder to the vocabulary, optionally tied to the
/// embedding (Press & Wolf 2017). Maps token inputs [N, bptt] int64 to logits
/// [N, bptt, vocab]. Stateless across batches: each batch starts from a zero hidden state
/// (the sharded, reshuffled windows of a worker are not consecutive text, so carrying the
/// state over would not help). Weights of the embedding and decoder start uniform in
/// [-0.1, 0.1], the decoder bias at 0.
class LstmLm : public Model {
 public:
  explicit LstmLm(LstmLmOptions options);
  std::string name() const override { return "lstm_lm"; }
  torch::Tensor forward(torch::Tensor tokens) override;
  std::int64_t outputs() const override { return options_.vocab; }
  std::int64_t sequence_length() const override { return options_.bptt; }

 private:
  LstmLmOptions options_;
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::LSTM lstm_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  torch::Tensor decoder_weight_;  ///< undefined when tied: the embedding's weight is used
  torch::Tensor decoder_bias_;
};

}  // namespace laconic::train
