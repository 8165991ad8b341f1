#include "engine/train/models/lstm_lm.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {

OptionFields<LstmLmOptions> LstmLmOptions::fields() {
  using O = LstmLmOptions;
  return OptionFields<O>()
      .integer("vocab", &O::vocab,
               "vocabulary size (unknown-word and end-of-line tokens included); must equal the dataset's vocab")
      .integer("embed", &O::embed, "embedding width", at_least(1))
      .integer("hidden", &O::hidden, "LSTM width (Harris 2020: 100 small, 300 medium, 500 large)", at_least(1))
      .integer("layers", &O::layers, "stacked LSTM layers", at_least(1))
      .number("dropout", &O::dropout, "dropout probability on embeddings, between layers and before the decoder",
              closed_open(0, 1))
      .flag("tied", &O::tied, "decoder shares the embedding's weight (embed == hidden)")
      .integer("bptt", &O::bptt, "tokens per example; must equal the dataset's bptt", at_least(1))
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.vocab < 3) throw out_of_range(spec, "vocab", ">= 3 (<unk>, <eos> and a word)", str_cat(o.vocab));
        if (o.tied && o.embed != o.hidden)
          throw ConfigError(str_cat(spec.name, ".tied = true needs embed == hidden, got embed = ", o.embed,
                                    " and hidden = ", o.hidden, "; set them equal or tied = false"));
      });
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
