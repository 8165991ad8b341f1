#include "engine/train/evaluate.hpp"

namespace laconic::train {

Evaluation evaluate(Model& model, const DataSplit& split, std::int64_t limit) {
  torch::NoGradGuard no_grad;
  model.eval();
  const std::int64_t n = limit > 0 ? std::min(limit, split.size()) : split.size();
  constexpr std::int64_t kBatch = 1000;
  double correct = 0, loss_sum = 0;
  for (std::int64_t begin = 0; begin < n; begin += kBatch) {
    const std::int64_t len = std::min(kBatch, n - begin);
    auto logits = model.forward(split.inputs.narrow(0, begin, len));
    auto labels = split.labels.narrow(0, begin, len);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, labels,
                    torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    correct += logits.argmax(1).eq(labels).sum().item<double>();
  }
  model.train();
  return {n > 0 ? correct / static_cast<double>(n) : 0.0,
          n > 0 ? loss_sum / static_cast<double>(n) : 0.0};
}

}  // namespace laconic::train
