#include "engine/train/optim/sgd.hpp"
#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

TEST_CASE("sgd with momentum matches LibTorch's SGD step for step", "[train][sgd]") {
  for (bool nesterov : {false, true}) {
    torch::manual_seed(3);
    auto a = torch::randn({5, 4}, torch::requires_grad());
    auto b = a.detach().clone().requires_grad_(true);
    train::Sgd ours(train::SgdOptions{0.05, 0.9, 1e-4, nesterov});
    torch::optim::SGD theirs({b}, torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4).nesterov(nesterov));
    std::vector<torch::Tensor> params{a};
    for (int step = 0; step < 10; ++step) {
      auto g = torch::randn({5, 4});
      a.mutable_grad() = g.clone();
      b.mutable_grad() = g.clone();
      ours.step(params);
      theirs.step();
      REQUIRE(torch::allclose(a, b, 1e-6, 1e-7));
    }
  }
}

TEST_CASE("sgd options name the field and the valid range", "[train][sgd]") {
  auto r = train::builtin_optimizers();
  REQUIRE_THROWS_WITH(r.create({"optimizer", "sgd", {{"momentum", 1.0}}}), "sgd.momentum must be in [0, 1), got 1");
  REQUIRE_THROWS_WITH(r.create({"optimizer", "sgd", {{"lr", -0.1}}}), "sgd.lr must be > 0, got -0.1");
}
