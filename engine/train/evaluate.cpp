#include "engine/train/evaluate.hpp"

#include "engine/core/compute_gate.hpp"

#include "engine/train/models/objective.hpp"
#include "engine/train/on_device.hpp"

namespace laconic::train {

std::int64_t evaluated_examples(const DataSplit& split, std::int64_t limit) {
  return limit > 0 ? std::min(limit, split.size()) : split.size();
}

EvaluationSums evaluate_sums(Model& model, const DataSplit& split, std::int64_t begin, std::int64_t end,
                             const std::function<void()>& on_batch) {
  torch::NoGradGuard no_grad;
  model.eval();
  // A classifier: 128 examples per forward pass. Larger batches push the conv layers'
  // activations out of the cache: LeNet-5 on Fashion-MNIST's 10,000 test images took 3.0 s more
  // in batches of 1000 than of 128 (a 1-step run of 2 workers: 6.8 s against 3.8 s; 256 and 64
  // were as fast as 128). A language model: about 1000 predictions per pass, since its logits
  // are [batch, T, vocab] (1000 sequences of 35 tokens over 10,000 words would need 1.4 GB).
  const std::int64_t tokens = split.labels.dim() == 2 ? split.labels.size(1) : 1;
  const std::int64_t batch = tokens > 1 ? std::max<std::int64_t>(1, 1000 / tokens) : std::int64_t{kEvaluationBatch};
  const torch::Device device = device_of(model);
  EvaluationSums sums;
  for (std::int64_t at = begin; at < end; at += batch) {
    const std::int64_t len = std::min(batch, end - at);
    const ComputeSlot slot;  // thread ranks: as many evaluate at once as the host has cores
    auto logits = model.forward(batch_of(split.inputs.narrow(0, at, len)).to(device));
    auto labels = batch_of(split.labels.narrow(0, at, len)).to(device).reshape({-1});
    logits = logits.reshape({labels.size(0), -1});
    sums.loss += torch::nn::functional::cross_entropy(
                     logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                     .item<double>();
    sums.correct += logits.argmax(1).eq(labels).sum().item<double>();
    if (on_batch) on_batch();
  }
  model.train();
  sums.predictions = static_cast<double>(std::max<std::int64_t>(0, end - begin) * tokens);
  return sums;
}

Evaluation evaluation_of(const EvaluationSums& sums, bool language_model, double bytes_per_token) {
  Evaluation e;
  e.accuracy = sums.predictions > 0 ? sums.correct / sums.predictions : 0.0;
  e.loss = sums.predictions > 0 ? sums.loss / sums.predictions : 0.0;
  if (language_model) e.perplexity = perplexity(e.loss);
  if (language_model && bytes_per_token > 0) e.bits_per_byte = bits_per_byte(e.loss, bytes_per_token);
  return e;
}

Evaluation evaluate(Model& model, const DataSplit& split, std::int64_t limit, const std::function<void()>& on_batch,
                    double bytes_per_token) {
  return evaluation_of(evaluate_sums(model, split, 0, evaluated_examples(split, limit), on_batch),
                       split.labels.dim() == 2, bytes_per_token);
}

}  // namespace laconic::train
