#include "engine/train/lstm_lm.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {

std::vector<FieldSpec> LstmLmOptions::fields() {
  return {
      {"vocab", FieldType::Int, std::int64_t{10000},
       "vocabulary size (unknown-word and end-of-line tokens included); must equal the "
       "dataset's vocab"},
      {"embed", FieldType::Int, std::int64_t{100}, "embedding width"},
      {"hidden", FieldType::Int, std::int64_t{100}, "LSTM width (Harris 2020: 100 small, 300 medium, 500 large)"},
      {"layers", FieldType::Int, std::int64_t{2}, "stacked LSTM layers"},
      {"dropout", FieldType::Number, 0.0,
       "dropout probability in [0, 1) on embeddings, between layers and before the decoder"},
      {"tied", FieldType::Bool, true, "decoder shares the embedding's weight (embed == hidden)"},
      {"bptt", FieldType::Int, std::int64_t{35}, "tokens per example; must equal the dataset's bptt"},
  };
}

LstmLmOptions LstmLmOptions::from(const ComponentSpec& spec) {
  LstmLmOptions o;
  o.vocab = spec.integer("vocab");
  o.embed = spec.integer("embed");
  o.hidden = spec.integer("hidden");
  o.layers = spec.integer("layers");
  o.dropout = spec.number("dropout");
  o.tied = spec.flag("tied");
  o.bptt = spec.integer("bptt");
  if (o.vocab < 3) throw ConfigError(str_cat("lstm_lm.vocab must be >= 3 (<unk>, <eos> and a word), got ", o.vocab));
  if (o.embed < 1) throw ConfigError(str_cat("lstm_lm.embed must be >= 1, got ", o.embed));
  if (o.hidden < 1) throw ConfigError(str_cat("lstm_lm.hidden must be >= 1, got ", o.hidden));
  if (o.layers < 1) throw ConfigError(str_cat("lstm_lm.layers must be >= 1, got ", o.layers));
  if (!(o.dropout >= 0 && o.dropout < 1))
    throw ConfigError(str_cat("lstm_lm.dropout must be in [0, 1), got ", o.dropout));
  if (o.bptt < 1) throw ConfigError(str_cat("lstm_lm.bptt must be >= 1, got ", o.bptt));
  if (o.tied && o.embed != o.hidden)
    throw ConfigError(str_cat("lstm_lm.tied = true needs embed == hidden, got embed = ", o.embed,
                              " and hidden = ", o.hidden, "; set them equal or tied = false"));
  return o;
}

LstmLm::LstmLm(LstmLmOptions options) : options_(options) {
  namespace nn = torch::nn;
  embedding_ = register_module("embedding", nn::Embedding(options_.vocab, options_.embed));
  lstm_ = register_module("lstm", nn::LSTM(nn::LSTMOptions(options_.embed, options_.hidden)
                                               .num_layers(options_.layers)
                                               .dropout(options_.layers > 1 ? options_.dropout : 0.0)
                                               .batch_first(true)));
  dropout_ = register_module("dropout", nn::Dropout(options_.dropout));
  torch::NoGradGuard no_grad;
  embedding_->weight.uniform_(-0.1, 0.1);
  // Tied: one parameter used twice. Registering it again under the decoder would make the
  // worker exchange it, and the optimizer step it, twice.
  if (!options_.tied)
    decoder_weight_ =
        register_parameter("decoder_weight", torch::empty({options_.vocab, options_.hidden}).uniform_(-0.1, 0.1));
  decoder_bias_ = register_parameter("decoder_bias", torch::zeros({options_.vocab}));
}

torch::Tensor LstmLm::forward(torch::Tensor tokens) {
  auto x = dropout_->forward(embedding_->forward(tokens));
  x = std::get<0>(lstm_->forward(x));
  x = dropout_->forward(x);
  return torch::nn::functional::linear(x, options_.tied ? embedding_->weight : decoder_weight_, decoder_bias_);
}

}  // namespace laconic::train
