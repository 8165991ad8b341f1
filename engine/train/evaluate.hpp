#pragma once
#include <functional>
#include <optional>

#include "engine/train/data/dataset.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

/// How a model does on a split. For a language model (labels [N, T]) accuracy and loss are per
/// predicted token and `perplexity` = exp(loss) is set.
struct Evaluation {
  double accuracy = 0;               ///< in [0, 1]: top-1, per example or per token
  double loss = 0;                   ///< mean cross-entropy, per example or per token
  std::optional<double> perplexity;  ///< language models only
  /// Language models on text whose bytes per token are known: loss / (ln 2 x bytes per token).
  std::optional<double> bits_per_byte;
};

/// Examples per forward pass when evaluating a classifier.
inline constexpr int kEvaluationBatch = 128;

/// What an evaluation adds up, so that the parts of a split evaluated apart can be summed.
struct EvaluationSums {
  double correct = 0;      ///< top-1 hits
  double loss = 0;         ///< summed cross-entropy
  double predictions = 0;  ///< examples, or tokens for a language model
  EvaluationSums& operator+=(const EvaluationSums& o) {
    correct += o.correct;
    loss += o.loss;
    predictions += o.predictions;
    return *this;
  }
};

/// How many examples an evaluation with `limit` covers (all when limit is 0).
std::int64_t evaluated_examples(const DataSplit& split, std::int64_t limit);

/// The sums over examples [begin, end) of `split`, in eval mode and without gradients;
/// restores train mode afterwards. `on_batch` (may be empty) is called after every batch.
EvaluationSums evaluate_sums(Model& model, const DataSplit& split, std::int64_t begin, std::int64_t end,
                             const std::function<void()>& on_batch = {});

/// Accuracy, loss (and a language model's perplexity, and its bits per byte where
/// `bytes_per_token` > 0: Dataset::bytes_per_token) from sums.
Evaluation evaluation_of(const EvaluationSums& sums, bool language_model, double bytes_per_token = 0);

/// Evaluates `model` on the first `limit` examples of `split` (all when limit is 0), in eval mode
/// and without gradients; restores train mode afterwards. `on_batch` (may be empty) is called
/// after every batch (the rank's liveness tick).
Evaluation evaluate(Model& model, const DataSplit& split, std::int64_t limit,
                    const std::function<void()>& on_batch = {}, double bytes_per_token = 0);

}  // namespace laconic::train
