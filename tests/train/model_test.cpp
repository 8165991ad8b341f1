// Every built-in model: output shapes, parameter counts, option errors, and a few SGD steps on a
// fixed batch reducing the loss through the worker's own loss and optimizer.
#include <map>
#include <memory>
#include <set>

#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/models/objective.hpp"
#include "engine/train/optim/sgd.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

std::unique_ptr<train::Model> make_model(const std::string& name, std::map<std::string, Value> fields = {}) {
  torch::manual_seed(1);
  return train::builtin_models().create({"model", name, std::move(fields)});
}

std::int64_t parameter_count(train::Model& model) {
  std::int64_t n = 0;
  for (const auto& p : model.parameters()) n += p.numel();
  return n;
}

/// Loss before and after `steps` SGD steps on one fixed batch.
std::pair<double, double> fit(train::Model& model, const torch::Tensor& inputs, const torch::Tensor& targets, int steps,
                              double lr) {
  auto params = model.parameters();
  train::Sgd sgd(train::SgdOptions{lr, 0.9});
  double first = 0, last = 0;
  for (int step = 0; step <= steps; ++step) {
    for (auto& p : params) p.mutable_grad() = torch::Tensor();
    auto loss = train::training_loss(model.forward(inputs), targets);
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
    if (step == steps) break;
    loss.backward();
    sgd.step(params);
  }
  return {first, last};
}

}  // namespace

TEST_CASE("every model maps its inputs to logits of the declared shape", "[train][model]") {
  CHECK(make_model("mlp")->forward(torch::randn({4, 1, 28, 28})).sizes() == torch::IntArrayRef({4, 10}));
  CHECK(make_model("mlp", {{"sizes", std::vector<std::int64_t>{3072, 100, 7}}})
            ->forward(torch::randn({2, 3, 32, 32}))
            .sizes() == torch::IntArrayRef({2, 7}));
  CHECK(make_model("vgg11")->forward(torch::randn({2, 3, 32, 32})).sizes() == torch::IntArrayRef({2, 10}));
  CHECK(make_model("resnet", {{"depth", std::int64_t{18}}})->forward(torch::randn({2, 3, 32, 32})).sizes() ==
        torch::IntArrayRef({2, 10}));
  CHECK(make_model("resnet", {{"depth", std::int64_t{20}}, {"classes", std::int64_t{100}}})
            ->forward(torch::randn({2, 3, 32, 32}))
            .sizes() == torch::IntArrayRef({2, 100}));
  CHECK(make_model("lstm_lm")->forward(torch::randint(10000, {2, 35}, torch::kInt64)).sizes() ==
        torch::IntArrayRef({2, 35, 10000}));
}

TEST_CASE("models have the parameter counts their doc comments state", "[train][model]") {
  CHECK(parameter_count(*make_model("lenet5")) == 61706);
  CHECK(parameter_count(*make_model("mlp")) == 327880);  // 784-392-50-10
  CHECK(parameter_count(*make_model("vgg11")) == 9228362);
  CHECK(parameter_count(*make_model("resnet", {{"depth", std::int64_t{18}}})) == 11173962);
  CHECK(parameter_count(*make_model("resnet", {{"depth", std::int64_t{20}}})) == 269722);
  // Tied: the 10000x100 embedding once, two LSTM layers of 4*100*(100+100) + 2*4*100, the bias.
  CHECK(parameter_count(*make_model("lstm_lm")) == 1000000 + 2 * 80800 + 10000);
  CHECK(parameter_count(*make_model("lstm_lm", {{"tied", false}})) == 1000000 + 2 * 80800 + 10000 + 1000000);
  // width scales every channel count.
  CHECK(parameter_count(*make_model("vgg11", {{"width", 0.5}})) < parameter_count(*make_model("vgg11")) / 3);
}

TEST_CASE("model options name the bad value", "[train][model]") {
  auto r = train::builtin_models();
  CHECK_THROWS_WITH(r.create({"model", "lstm_lm", {{"hidden", std::int64_t{300}}}}),
                    Catch::Contains("lstm_lm.tied = true needs embed == hidden, got embed = 100 "
                                    "and hidden = 300"));
  CHECK_NOTHROW(r.create(
      {"model",
       "lstm_lm",
       {{"hidden", std::int64_t{30}}, {"embed", std::int64_t{20}}, {"tied", false}, {"vocab", std::int64_t{50}}}}));
  CHECK_THROWS_WITH(r.create({"model", "mlp", {{"activation", std::string("gelu")}}}),
                    Catch::Contains("mlp.activation must be one of \"tanh\", \"relu\", \"sigmoid\", got \"gelu\""));
  CHECK_THROWS_WITH(r.create({"model", "mlp", {{"sizes", std::vector<std::int64_t>{784}}}}),
                    Catch::Contains("mlp.sizes needs at least inputs and classes"));
  CHECK_THROWS_WITH(r.create({"model", "mlp", {{"sizes", std::vector<std::int64_t>{784, 0, 10}}}}),
                    Catch::Contains("mlp.sizes entries must be >= 1, got 0 at position 2"));
  CHECK_THROWS_WITH(r.create({"model", "resnet", {{"depth", std::int64_t{34}}}}),
                    Catch::Contains("resnet.depth must be 18 or 20, got 34"));
  CHECK_THROWS_WITH(r.create({"model", "vgg11", {{"width", 0.0}}}),
                    Catch::Contains("vgg11.width must be in (0, 16], got 0"));
}

TEST_CASE("a few SGD steps on a fixed batch reduce every model's loss", "[train][model]") {
  torch::manual_seed(2);
  auto images = torch::randn({8, 3, 32, 32});
  auto labels = torch::arange(8, torch::kInt64).remainder(10);
  SECTION("mlp") {
    auto model = make_model("mlp", {{"sizes", std::vector<std::int64_t>{3072, 64, 10}}});
    auto [before, after] = fit(*model, images, labels, 5, 0.05);
    CHECK(after < 0.7 * before);
  }
  SECTION("mlp, relu and sigmoid") {
    for (const char* activation : {"relu", "sigmoid"}) {
      auto model = make_model(
          "mlp", {{"sizes", std::vector<std::int64_t>{3072, 64, 10}}, {"activation", std::string(activation)}});
      auto [before, after] = fit(*model, images, labels, 5, 0.05);
      CHECK(after < before);
    }
  }
  SECTION("vgg11") {
    auto model = make_model("vgg11", {{"width", 0.25}});
    auto [before, after] = fit(*model, images, labels, 5, 0.05);
    CHECK(after < 0.7 * before);
  }
  SECTION("resnet-18") {
    auto model = make_model("resnet", {{"depth", std::int64_t{18}}});
    auto [before, after] = fit(*model, images.narrow(0, 0, 4), labels.narrow(0, 0, 4), 4, 0.05);
    CHECK(after < 0.7 * before);
  }
  SECTION("resnet-20") {
    auto model = make_model("resnet", {{"depth", std::int64_t{20}}});
    auto [before, after] = fit(*model, images, labels, 5, 0.05);
    CHECK(after < 0.7 * before);
  }
  SECTION("lstm_lm") {
    auto model = make_model("lstm_lm", {{"vocab", std::int64_t{50}},
                                        {"embed", std::int64_t{32}},
                                        {"hidden", std::int64_t{32}},
                                        {"bptt", std::int64_t{12}}});
    auto tokens = torch::randint(50, {4, 13}, torch::kInt64);
    auto [before, after] = fit(*model, tokens.narrow(1, 0, 12), tokens.narrow(1, 1, 12), 20, 1.0);
    CHECK(after < 0.9 * before);
  }
}

TEST_CASE("a tied language model holds its embedding once and uses it as the decoder", "[train][model]") {
  auto model = make_model("lstm_lm", {{"vocab", std::int64_t{20}},
                                      {"embed", std::int64_t{8}},
                                      {"hidden", std::int64_t{8}},
                                      {"bptt", std::int64_t{5}}});
  std::set<const void*> storages;
  for (const auto& p : model->parameters()) CHECK(storages.insert(p.data_ptr()).second);
  auto named = model->named_parameters();
  CHECK(named.contains("embedding.weight"));
  CHECK_FALSE(named.contains("decoder_weight"));
  // Zeroing the embedding zeroes the logits but for the (zero) bias.
  {
    torch::NoGradGuard no_grad;
    named["embedding.weight"].zero_();
  }
  model->eval();
  CHECK(model->forward(torch::zeros({1, 5}, torch::kInt64)).abs().max().item<double>() == 0.0);
}
