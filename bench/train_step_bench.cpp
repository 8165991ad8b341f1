// One training step (forward, loss, backward, SGD step; one worker, no compression) of every
// built-in model, two ways: laconic's code path (the registered model, the loss as the worker
// computes it, gradients written into one flat buffer as the worker lays them out, laconic's
// Sgd) and a plain LibTorch loop (the same model object's forward, cross_entropy,
// torch::optim::SGD with zero_grad). The difference is laconic's overhead per step.
// bench/train_step_table.py prints the medians and the ratio (docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <memory>

#include "engine/train/builtin.hpp"
#include "engine/train/models/objective.hpp"
#include "engine/train/optim/sgd.hpp"

namespace {

using laconic::Value;

struct Case {
  const char* label;
  const char* model;
  std::map<std::string, Value> fields;
  std::int64_t batch;
  std::vector<std::int64_t> example;  ///< one input's shape; {T} with `tokens` = vocab
  std::int64_t classes;
  bool tokens = false;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"mlp", "mlp", {}, 64, {1, 28, 28}, 10},
      {"lenet5", "lenet5", {}, 64, {1, 28, 28}, 10},
      {"resnet20", "resnet", {{"depth", std::int64_t{20}}}, 32, {3, 32, 32}, 10},
      {"vgg11", "vgg11", {}, 32, {3, 32, 32}, 10},
      {"resnet18", "resnet", {{"depth", std::int64_t{18}}}, 16, {3, 32, 32}, 10},
      {"lstm_lm", "lstm_lm", {}, 20, {35}, 10000, true},
      {"gpt", "gpt", {}, 32, {128}, 256, true},
  };
  return kCases;
}

std::unique_ptr<laconic::train::Model> make_model(const Case& c) {
  torch::manual_seed(1);
  return laconic::train::builtin_models().create({"model", c.model, c.fields});
}

std::pair<torch::Tensor, torch::Tensor> batch(const Case& c) {
  torch::manual_seed(2);
  std::vector<std::int64_t> shape = {c.batch};
  shape.insert(shape.end(), c.example.begin(), c.example.end());
  if (c.tokens) {
    auto tokens = torch::randint(c.classes, shape, torch::kInt64);
    return {tokens, torch::randint(c.classes, shape, torch::kInt64)};
  }
  return {torch::randn(shape), torch::randint(c.classes, {c.batch}, torch::kInt64)};
}

void bm_laconic(benchmark::State& state, const Case& c) {
  torch::set_num_threads(1);
  auto model = make_model(c);
  auto [inputs, targets] = batch(c);
  // The worker's layout: every .grad() a view into one flat buffer that backward accumulates
  // into and the topology would exchange.
  auto params = model->parameters();
  std::int64_t total = 0;
  for (auto& p : params) total += p.numel();
  auto flat_grad = torch::zeros({total});
  std::int64_t offset = 0;
  for (auto& p : params) {
    p.mutable_grad() = flat_grad.narrow(0, offset, p.numel()).view_as(p);
    offset += p.numel();
  }
  laconic::train::Sgd sgd(laconic::train::SgdOptions{0.01, 0.9});
  for (auto _ : state) {
    flat_grad.zero_();
    auto loss = laconic::train::training_loss(model->forward(inputs), targets);
    loss.backward();
    sgd.step(params);
    benchmark::DoNotOptimize(loss.item<float>());
  }
}

void bm_torch(benchmark::State& state, const Case& c) {
  torch::set_num_threads(1);
  auto model = make_model(c);
  auto [inputs, targets] = batch(c);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  for (auto _ : state) {
    sgd.zero_grad();
    auto logits = model->forward(inputs);
    auto loss = c.tokens ? torch::nn::functional::cross_entropy(logits.view({-1, c.classes}), targets.view({-1}))
                         : torch::nn::functional::cross_entropy(logits, targets);
    loss.backward();
    sgd.step();
    benchmark::DoNotOptimize(loss.item<float>());
  }
}

// Registered interleaved (laconic, torch per model) so slow drifts of a shared machine hit
// both sides of a ratio alike.
const bool kRegistered = [] {
  for (const Case& c : cases()) {
    benchmark::RegisterBenchmark((std::string("laconic/") + c.label).c_str(), bm_laconic, c)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("torch/") + c.label).c_str(), bm_torch, c)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
