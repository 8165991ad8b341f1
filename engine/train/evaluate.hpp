#pragma once
#include "engine/train/dataset.hpp"
#include "engine/train/model.hpp"

namespace laconic::train {

/// Accuracy in [0, 1] and mean cross-entropy of a classifier on a split.
struct Evaluation {
  double accuracy = 0;
  double loss = 0;
};

/// Evaluates `model` on the first `limit` examples of `split` (all when limit is 0), in eval mode
/// and without gradients; restores train mode afterwards.
Evaluation evaluate(Model& model, const DataSplit& split, std::int64_t limit);

}  // namespace laconic::train
