// Evaluation split across workers against worker 0 evaluating the whole split alone.
#include <atomic>
#include <memory>
#include <vector>

#include "engine/train/models/mlp.hpp"
#include "engine/train/sharded_evaluation.hpp"
#include "rank_threads.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

// 103 examples (not a multiple of the workers or the batch) of 8 values in 3 classes.
train::DataSplit tabular_split() {
  torch::manual_seed(5);
  return {torch::randn({103, 8}), torch::randint(0, 3, {103}, torch::kInt64)};
}

std::shared_ptr<train::Mlp> small_model() {
  torch::manual_seed(7);  // every rank builds the same replica
  train::MlpOptions o;
  o.sizes = {8, 6, 3};
  return std::make_shared<train::Mlp>(o);
}

}  // namespace

TEST_CASE("evaluation split across identical replicas equals one worker evaluating it all", "[train][evaluate]") {
  const auto split = tabular_split();
  auto reference_model = small_model();
  const train::Evaluation whole = train::evaluate(*reference_model, split, 0);
  const train::Evaluation first_half = train::evaluate(*reference_model, split, 50);
  for (const int workers : {2, 3}) {
    train::Evaluation result, limited;
    std::atomic<int> sharded_ranks{0};
    // Built before the threads: the seed is global to the process.
    std::vector<std::shared_ptr<train::Mlp>> models;
    for (int r = 0; r < workers; ++r) models.push_back(small_model());
    testing::run_ranks(workers, std::chrono::seconds(20), [&](comm::Communicator& comm) {
      auto& model = models[static_cast<std::size_t>(comm.rank())];
      bool sharded = false;
      auto e = train::evaluate_across(*model, split, 0, comm, workers, true, {}, &sharded);
      auto l = train::evaluate_across(*model, split, 50, comm, workers, true, {});
      if (sharded) ++sharded_ranks;
      if (comm.rank() == 0) {
        result = e;
        limited = l;
      }
    });
    CHECK(sharded_ranks == workers);
    // Hits are counted exactly; the loss is summed over other batches (each sum in float32).
    CHECK(result.accuracy == whole.accuracy);
    CHECK(result.loss == Approx(whole.loss).epsilon(1e-6));
    CHECK(limited.accuracy == first_half.accuracy);
    CHECK(limited.loss == Approx(first_half.loss).epsilon(1e-6));
  }
}

TEST_CASE("replicas that differ are not split up: worker 0 evaluates its own model alone", "[train][evaluate]") {
  const auto split = tabular_split();
  train::Evaluation result, own;
  bool sharded = true;
  std::vector<std::shared_ptr<train::Mlp>> models = {small_model(), small_model()};
  testing::run_ranks(2, std::chrono::seconds(20), [&](comm::Communicator& comm) {
    auto& model = models[static_cast<std::size_t>(comm.rank())];
    if (comm.rank() == 1) {
      // A buffer-free model: a changed parameter must be seen.
      torch::NoGradGuard no_grad;
      model->parameters().front().add_(0.5);
    }
    bool s = true;
    auto e = train::evaluate_across(*model, split, 0, comm, 2, true, {}, &s);
    if (comm.rank() == 0) {
      result = e;
      own = train::evaluate(*model, split, 0);
      sharded = s;
    }
  });
  CHECK_FALSE(sharded);
  CHECK(result.accuracy == own.accuracy);
  CHECK(result.loss == own.loss);
}

TEST_CASE("the replica hash sees buffers such as batch-norm statistics", "[train][evaluate]") {
  torch::nn::BatchNorm1d a(4), b(4);
  struct Wrapper : train::Model {
    explicit Wrapper(torch::nn::BatchNorm1d bn) : bn(register_module("bn", bn)) {}
    std::string name() const override { return "bn"; }
    torch::Tensor forward(torch::Tensor x) override { return bn(x); }
    torch::nn::BatchNorm1d bn;
  };
  Wrapper x(a), y(b);
  CHECK(train::model_hash(x, train::HashedState::ParametersAndBuffers) ==
        train::model_hash(y, train::HashedState::ParametersAndBuffers));
  y.bn->running_mean.add_(1.0);
  CHECK(train::model_hash(x, train::HashedState::ParametersAndBuffers) !=
        train::model_hash(y, train::HashedState::ParametersAndBuffers));
}
