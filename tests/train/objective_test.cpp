// The language-model loss and evaluation (per-token cross-entropy, perplexity) against hand
// computations, and the model-dataset compatibility check.
#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/evaluate.hpp"
#include "engine/train/models/objective.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

/// A "language model" whose logits at a position are a fixed row per input token.
class TableModel : public train::Model {
 public:
  explicit TableModel(torch::Tensor table) : table_(std::move(table)) {}
  std::string name() const override { return "table"; }
  torch::Tensor forward(torch::Tensor tokens) override {
    return table_.index_select(0, tokens.reshape({-1})).reshape({tokens.size(0), tokens.size(1), -1});
  }

 private:
  torch::Tensor table_;
};

}  // namespace

TEST_CASE("perplexity is exp of the mean per-token cross-entropy, by hand", "[train][evaluate]") {
  // Token 0 predicts (1/4, 3/4), token 1 predicts (1/2, 1/2).
  TableModel model(torch::tensor({{0.0f, static_cast<float>(std::log(3.0))}, {0.0f, 0.0f}}));
  train::DataSplit split{torch::tensor({{0, 1}, {1, 1}}, torch::kInt64),
                         torch::tensor({{1, 0}, {1, 1}}, torch::kInt64)};
  // Cross-entropies: -ln 3/4, -ln 1/2, -ln 1/2, -ln 1/2; mean ln(4/3 * 8) / 4 = ln(32/3) / 4.
  const double mean = std::log(32.0 / 3.0) / 4.0;
  const auto e = train::evaluate(model, split, 0);
  REQUIRE(e.perplexity.has_value());
  CHECK(e.loss == Approx(mean).epsilon(1e-6));
  CHECK(*e.perplexity == Approx(std::pow(32.0 / 3.0, 0.25)).epsilon(1e-6));
  CHECK(*e.perplexity == Approx(std::exp(e.loss)).epsilon(1e-12));
  // argmax: token 0 -> 1 (right), token 1 -> 0 (ties go to the first): right, wrong, wrong.
  CHECK(e.accuracy == Approx(0.5));
  // The training loss is the same mean over the 4 tokens.
  CHECK(train::training_loss(model.forward(split.inputs), split.labels).item<double>() == Approx(mean).epsilon(1e-6));
  // Only the first example: (-ln 3/4 - ln 1/2) / 2.
  CHECK(train::evaluate(model, split, 1).loss == Approx(std::log(8.0 / 3.0) / 2.0).epsilon(1e-6));
}

TEST_CASE("a classifier's evaluation has no perplexity", "[train][evaluate]") {
  auto model = train::builtin_models().create({"model", "mlp", {{"sizes", std::vector<std::int64_t>{4, 3}}}});
  train::DataSplit split{torch::randn({5, 4}), torch::tensor({0, 1, 2, 0, 1}, torch::kInt64)};
  const auto e = train::evaluate(*model, split, 0);
  CHECK_FALSE(e.perplexity.has_value());
  CHECK(e.loss > 0);
}

TEST_CASE("a model that does not fit its dataset is refused, naming both", "[train][objective]") {
  auto models = train::builtin_models();
  auto datasets = train::builtin_datasets();
  auto synthetic = [&](std::vector<std::int64_t> shape, std::int64_t classes) {
    return datasets.create({"dataset", "synthetic", {{"shape", shape}, {"classes", classes}}});
  };
  auto cifar_like = synthetic({3, 32, 32}, 10);
  CHECK_NOTHROW(train::check_compatible(*models.create({"model", "vgg11", {}}), *cifar_like));
  CHECK_NOTHROW(train::check_compatible(*models.create({"model", "resnet", {}}), *cifar_like));
  CHECK_THROWS_WITH(train::check_compatible(*models.create({"model", "lenet5", {}}), *cifar_like),
                    "model lenet5 on dataset synthetic (examples 3x32x32): lenet5 takes 1x28x28 grey images");
  CHECK_THROWS_WITH(train::check_compatible(*models.create({"model", "mlp", {}}), *cifar_like),
                    Catch::Contains("mlp.sizes starts with 784 inputs but each example has 3072 values"));
  CHECK_THROWS_WITH(
      train::check_compatible(*models.create({"model", "resnet", {{"classes", std::int64_t{100}}}}), *cifar_like),
      "model resnet has 100 outputs but dataset synthetic has 10 classes: set resnet.classes = 10");
  CHECK_THROWS_WITH(train::check_compatible(*models.create({"model", "vgg11", {}}), *synthetic({1, 28, 28}, 10)),
                    Catch::Contains("vgg11 takes images of in_channels = 3 channels, at least 32x32"));
  CHECK_THROWS_WITH(train::check_compatible(*models.create({"model", "lstm_lm", {}}), *cifar_like),
                    Catch::StartsWith("model lstm_lm is a language model, but dataset synthetic holds "
                                      "classification examples"));
}
