// averaged_optimizer_state (engine/train/averaged_state.cpp): the state a joiner takes under the
// join state "averaged" is the element-wise mean of the staying workers' optimizer states, checked
// against the mean computed here; worker 0 keeps its own.
#include <catch2/catch.hpp>

#include <mutex>

#include "engine/core/state_io.hpp"
#include "engine/train/averaged_state.hpp"
#include "engine/train/optim/sgd.hpp"
#include "rank_threads.hpp"

using namespace laconic;

namespace {

// An SGD with momentum whose buffer, after one step, is `gradient` (the first step's b = g).
std::unique_ptr<train::Sgd> stepped_sgd(std::vector<torch::Tensor>& params, float gradient) {
  train::SgdOptions options;
  options.momentum = 0.9;
  auto sgd = std::make_unique<train::Sgd>(options);
  params = {torch::zeros({5}, torch::requires_grad())};
  params[0].mutable_grad() = torch::arange(5, torch::kFloat) * gradient;
  sgd->step(params);
  return sgd;
}

}  // namespace

TEST_CASE("the averaged join state is the mean of the staying workers' optimizer states", "[churn][averaged]") {
  std::mutex mutex;
  std::vector<std::uint8_t> sent;
  std::vector<float> kept;
  // Ranks 0, 1 and 3 stay (rank 2 is the joiner and takes no part); their momenta are i x 1, 2, 4.
  testing::run_ranks(4, std::chrono::seconds(30), [&](comm::Communicator& comm) {
    if (comm.rank() == 2) return;
    std::vector<torch::Tensor> params;
    auto sgd = stepped_sgd(params, static_cast<float>(1 << comm.rank()));
    const auto bytes = train::averaged_optimizer_state(*sgd, comm, {0, 1, 3});
    comm.set_members({0, 1, 2, 3});  // every rank again, for run_ranks' closing barrier
    std::lock_guard<std::mutex> lock(mutex);
    if (comm.rank() != 0) {
      CHECK(bytes.empty());
      return;
    }
    sent = bytes;
    const auto own = sgd->state_tensors().at(0);
    kept.assign(own.data_ptr<float>(), own.data_ptr<float>() + own.numel());
  });
  train::Sgd joiner(train::SgdOptions{});
  StateReader in(sent);
  joiner.load_state(in);
  const auto averaged = joiner.state_tensors().at(0);
  REQUIRE(averaged.numel() == 5);
  for (int i = 0; i < 5; ++i) {
    CHECK(averaged[i].item<float>() == Approx(i * (1.0 + 2.0 + 8.0) / 3).epsilon(1e-6));
    CHECK(kept[static_cast<std::size_t>(i)] == static_cast<float>(i));  // worker 0's own: i x 1
  }
}
