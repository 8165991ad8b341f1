// Data parallelism is exact: the averaged gradient of N workers on batches of b examples, after
// a dense allreduce, equals the gradient of one worker on the N*b examples together.
#include <mutex>

#include "engine/compress/builtin.hpp"
#include "engine/topology/builtin.hpp"
#include "engine/train/builtin.hpp"
#include "rank_threads.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

/// The flat gradient of the mean cross-entropy of a fresh LeNet-5 (seed 3) on `inputs`.
std::vector<float> lenet_gradient(const torch::Tensor& inputs, const torch::Tensor& labels) {
  torch::manual_seed(3);
  auto model = train::builtin_models().create({"model", "lenet5", {}});
  auto loss = torch::nn::functional::cross_entropy(model->forward(inputs), labels);
  loss.backward();
  std::vector<float> flat;
  for (const auto& p : model->parameters()) {
    auto g = p.grad().reshape({-1}).contiguous();
    flat.insert(flat.end(), g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  }
  return flat;
}

}  // namespace

TEST_CASE(
    "N workers with batch b and a dense allreduce give the gradient of one worker with "
    "batch N*b",
    "[train][equivalence][multirank]") {
  constexpr int kWorkers = 4;
  constexpr std::int64_t b = 8;
  torch::manual_seed(11);
  const auto inputs = torch::randn({kWorkers * b, 1, 28, 28});
  const auto labels = torch::randint(0, 10, {kWorkers * b}, torch::kInt64);
  std::vector<float> whole;
  std::vector<std::vector<float>> averaged(kWorkers);
  std::mutex mutex;  // LibTorch's global generator: one model at a time
  whole = lenet_gradient(inputs, labels);
  testing::run_ranks(kWorkers, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    std::vector<float> g;
    {
      std::lock_guard<std::mutex> lock(mutex);
      g = lenet_gradient(inputs.narrow(0, comm.rank() * b, b), labels.narrow(0, comm.rank() * b, b));
    }
    auto topology = topology::builtin_topologies().create({"topology", "allreduce", {}});
    auto none = compress::builtin_compressors().create({"compressor", "none", {}});
    topology->average(g, *none, comm);
    std::lock_guard<std::mutex> lock(mutex);
    averaged[static_cast<std::size_t>(comm.rank())] = g;
  });
  REQUIRE(whole.size() == 61706);
  for (int r = 1; r < kWorkers; ++r) CHECK(averaged[static_cast<std::size_t>(r)] == averaged[0]);
  double max_error = 0, max_value = 0;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    max_error = std::max(max_error, static_cast<double>(std::abs(averaged[0][i] - whole[i])));
    max_value = std::max(max_value, static_cast<double>(std::abs(whole[i])));
  }
  // The mean of 4 means of 8 equals the mean of 32 up to float32 summation order.
  CHECK(max_error <= 1e-5 * max_value);
  CHECK(max_value > 0);
}
