// The hooks an overlapped exchange listens to: one call per parameter and backward pass, made
// once .grad() holds that pass's whole gradient, the last layer's parameters first.
#include <algorithm>
#include <map>
#include <vector>

#include <torch/torch.h>

#include "engine/train/gradient_hooks.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

TEST_CASE("a gradient is reported ready once per backward pass, complete, from the last layer back",
          "[train][overlap]") {
  torch::manual_seed(3);
  torch::nn::Sequential model(torch::nn::Linear(4, 3), torch::nn::Tanh(), torch::nn::Linear(3, 2));
  std::vector<torch::Tensor> params = model->parameters();  // w1, b1, w2, b2
  REQUIRE(params.size() == 4);
  std::vector<std::size_t> order;
  std::map<std::size_t, torch::Tensor> seen;  // .grad() as it was when reported
  {
    train::GradientReadyHooks hooks(params, [&](std::size_t i) {
      order.push_back(i);
      seen[i] = params[i].grad().clone();
    });
    const auto x = torch::randn({5, 4});
    // The first layer's input is used twice, so its weight's gradient has two parts to sum:
    // reported only once both are in.
    const auto loss = model->forward(x).sum() + model->forward(2 * x).pow(2).sum();
    loss.backward();
    REQUIRE(order.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      INFO("parameter " << i);
      CHECK(std::count(order.begin(), order.end(), i) == 1);
      CHECK(torch::equal(seen.at(i), params[i].grad()));
    }
    // The second layer's weight and bias come before the first layer's.
    const auto position = [&](std::size_t i) { return std::find(order.begin(), order.end(), i) - order.begin(); };
    CHECK(std::max(position(2), position(3)) < std::min(position(0), position(1)));

    order.clear();
    model->forward(x).sum().backward();  // a second pass reports again
    CHECK(order.size() == 4);
  }
  order.clear();
  model->forward(torch::randn({2, 4})).sum().backward();  // hooks gone: nothing reported
  CHECK(order.empty());
}
