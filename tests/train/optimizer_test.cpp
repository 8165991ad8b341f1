// The Adam family against references, step by step on the same gradients: adam and adamw
// against LibTorch's torch::optim::Adam / AdamW, lamb against its paper's equations written out
// plainly; every registered optimizer's state restored bit for bit from a checkpoint, and its
// update for exchange = "update" equal to what its step subtracts.
#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/optim/adam.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/optim/lamb.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

// Two "layers" of parameters and a gradient for each at each step (seeded).
std::vector<torch::Tensor> fresh_parameters() {
  torch::manual_seed(5);
  return {torch::randn({6, 4}).requires_grad_(true), torch::randn({6}).requires_grad_(true)};
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
}

void set_gradients(std::vector<torch::Tensor>& params, int step) {
  torch::manual_seed(100 + step);
  for (auto& p : params) p.mutable_grad() = torch::randn(p.sizes());
}

bool all_close(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, double rtol = 1e-5) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::allclose(a[i], b[i], rtol, 1e-7)) return false;
  return true;
}

bool identical(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

ComponentSpec spec(const std::string& name, std::map<std::string, Value> fields = {}) {
  return {"optimizer", name, std::move(fields)};
}

}  // namespace

TEST_CASE("adam and adamw match LibTorch's Adam and AdamW step for step", "[train][optimizer][adam]") {
  for (const double weight_decay : {0.0, 0.05}) {
    for (const bool decoupled : {false, true}) {
      INFO((decoupled ? "adamw" : "adam") << ", weight decay " << weight_decay);
      auto ours_params = fresh_parameters();
      auto theirs_params = copies(ours_params);
      train::AdamOptions options;
      options.lr = 0.01;
      options.beta1 = 0.8;
      options.beta2 = 0.99;
      options.eps = 1e-6;
      options.weight_decay = weight_decay;
      options.decoupled = decoupled;
      train::Adam ours(options);
      std::unique_ptr<torch::optim::Optimizer> theirs;
      if (decoupled)
        theirs = std::make_unique<torch::optim::AdamW>(
            theirs_params, torch::optim::AdamWOptions(0.01).betas({0.8, 0.99}).eps(1e-6).weight_decay(weight_decay));
      else
        theirs = std::make_unique<torch::optim::Adam>(
            theirs_params, torch::optim::AdamOptions(0.01).betas({0.8, 0.99}).eps(1e-6).weight_decay(weight_decay));
      for (int step = 0; step < 20; ++step) {
        set_gradients(ours_params, step);
        set_gradients(theirs_params, step);
        ours.step(ours_params);
        theirs->step();
        REQUIRE(all_close(ours_params, theirs_params));
      }
      CHECK_FALSE(identical(ours_params, fresh_parameters()));  // they moved
    }
  }
}

TEST_CASE("lamb follows its paper's equations, layer by layer", "[train][optimizer][lamb]") {
  constexpr double lr = 0.02, b1 = 0.9, b2 = 0.999, eps = 1e-6, wd = 0.01;
  auto params = fresh_parameters();
  // The reference in double precision, on plain vectors.
  std::vector<std::vector<double>> x, m, v;
  for (const auto& p : params) {
    auto c = p.detach().contiguous();
    x.emplace_back(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    m.emplace_back(c.numel(), 0.0);
    v.emplace_back(c.numel(), 0.0);
  }
  train::Lamb lamb(train::LambOptions{lr, b1, b2, eps, wd});
  for (int t = 1; t <= 15; ++t) {
    set_gradients(params, t);
    for (std::size_t l = 0; l < params.size(); ++l) {
      auto g = params[l].grad().contiguous();
      const float* gd = g.data_ptr<float>();
      std::vector<double> u(x[l].size());
      double wnorm = 0, unorm = 0;
      for (std::size_t i = 0; i < u.size(); ++i) {
        m[l][i] = b1 * m[l][i] + (1 - b1) * gd[i];
        v[l][i] = b2 * v[l][i] + (1 - b2) * gd[i] * gd[i];
        const double mhat = m[l][i] / (1 - std::pow(b1, t)), vhat = v[l][i] / (1 - std::pow(b2, t));
        u[i] = mhat / (std::sqrt(vhat) + eps) + wd * x[l][i];
        wnorm += x[l][i] * x[l][i];
        unorm += u[i] * u[i];
      }
      const double trust = wnorm > 0 && unorm > 0 ? std::sqrt(wnorm) / std::sqrt(unorm) : 1.0;
      for (std::size_t i = 0; i < u.size(); ++i) x[l][i] -= lr * trust * u[i];
    }
    lamb.step(params);
    for (std::size_t l = 0; l < params.size(); ++l) {
      auto c = params[l].detach().contiguous();
      for (std::size_t i = 0; i < x[l].size(); ++i) REQUIRE(c.data_ptr<float>()[i] == Approx(x[l][i]).epsilon(1e-5));
    }
  }
}

TEST_CASE("every optimizer continues bit for bit from its saved state", "[train][optimizer][checkpoint]") {
  const auto registry = train::builtin_optimizers();
  for (const auto& info : registry.infos()) {
    INFO(info.name);
    // DeMo and 1-bit Adam step only through their exchange (checkpoint_test's "demo" and
    // "onebit_adam" resume them); what brings_codec() says, own_codec() does.
    const auto probe = registry.create(spec(info.name, {{"lr", 0.01}}));
    CHECK(probe->brings_codec() == (probe->own_codec() != nullptr));
    if (probe->brings_codec()) continue;
    // sgd with momentum, so that it has state to keep.
    const std::map<std::string, Value> fields = info.name == "sgd"
                                                    ? std::map<std::string, Value>{{"lr", 0.01}, {"momentum", 0.9}}
                                                    : std::map<std::string, Value>{{"lr", 0.01}};
    auto original = registry.create(spec(info.name, fields));
    auto params = fresh_parameters();
    for (int step = 0; step < 3; ++step) {
      set_gradients(params, step);
      original->step(params);
    }
    std::vector<std::uint8_t> bytes;
    StateWriter out(bytes);
    original->save_state(out);
    auto restored = registry.create(spec(info.name, fields));
    StateReader in(bytes);
    restored->load_state(in);
    CHECK(in.done());
    auto twin = copies(params);
    for (int step = 3; step < 8; ++step) {
      set_gradients(params, step);
      set_gradients(twin, step);
      original->step(params);
      restored->step(twin);
    }
    CHECK(identical(params, twin));
  }
}

TEST_CASE("every optimizer's update for exchange = \"update\" is what its step subtracts",
          "[train][optimizer][exchange]") {
  const auto registry = train::builtin_optimizers();
  for (const auto& info : registry.infos()) {
    INFO(info.name);
    // DeMo and 1-bit Adam have no step without their exchange (demo_test.cpp and
    // onebit_adam_test.cpp check them against references).
    if (registry.create(spec(info.name, {{"lr", 0.01}}))->brings_codec()) continue;
    const std::map<std::string, Value> fields =
        info.name == "sgd" ? std::map<std::string, Value>{{"lr", 0.01}, {"momentum", 0.9}, {"weight_decay", 0.01}}
                           : std::map<std::string, Value>{{"lr", 0.01}, {"weight_decay", 0.01}};
    auto stepping = registry.create(spec(info.name, fields));
    auto updating = registry.create(spec(info.name, fields));
    auto stepped = fresh_parameters();
    auto updated = copies(stepped);
    for (int step = 0; step < 6; ++step) {
      set_gradients(stepped, step);
      set_gradients(updated, step);
      stepping->step(stepped);
      updating->compute_update(updated);
      torch::NoGradGuard no_grad;
      for (auto& p : updated) p.sub_(p.grad());
      REQUIRE(all_close(stepped, updated, 1e-5));
    }
  }
}

TEST_CASE("adam, adamw and lamb name the field and the valid range", "[train][optimizer]") {
  const auto registry = train::builtin_optimizers();
  CHECK_THROWS_WITH(registry.create(spec("adam", {{"betas", std::vector<double>{0.9, 1.0}}})),
                    "adam.betas must be two numbers in [0, 1), got {0.9, 1}");
  CHECK_THROWS_WITH(registry.create(spec("adamw", {{"betas", std::vector<double>{0.9}}})),
                    "adamw.betas must be two numbers in [0, 1), got {0.9}");
  CHECK_THROWS_WITH(registry.create(spec("lamb", {{"eps", 0.0}})), "lamb.eps must be > 0, got 0");
  CHECK_THROWS_WITH(registry.create(spec("adam", {{"lr", -1.0}})), "adam.lr must be > 0, got -1");
  // A list of ints is a list of numbers.
  CHECK_NOTHROW(registry.create(spec("adam", {{"betas", std::vector<std::int64_t>{0, 0}}})));
  CHECK(registry.resolve(spec("adamw")).number("weight_decay") == 0.01);
}
