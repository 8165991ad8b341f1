#pragma once
// What a model is trained to predict: the loss the worker minimizes, and the check that a model
// and a dataset fit together (classes, sequence length, example shape) before a run starts.
#include <torch/torch.h>

#include "engine/train/data/dataset.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

/// Mean cross-entropy of `logits` against integer `targets`. Classification: logits [N, C],
/// targets [N]. Language modelling: logits [N, T, V], targets [N, T], flattened to N*T
/// predictions (the mean is per token).
torch::Tensor training_loss(const torch::Tensor& logits, const torch::Tensor& targets);

/// exp(mean cross-entropy per token): the perplexity of a language model.
double perplexity(double mean_cross_entropy);

/// Bits per byte of text: a mean cross-entropy per token (nats) over ln 2 and the bytes each
/// token stands for (1 for byte tokens).
double bits_per_byte(double mean_cross_entropy, double bytes_per_token);

/// ConfigError unless `model` can train on `dataset`: same number of classes (or vocabulary),
/// same sequence length (lstm_lm.bptt = text.bptt), and examples of a shape the model takes.
/// Needs no data loaded.
void check_compatible(const Model& model, const Dataset& dataset);

}  // namespace laconic::train
