// Stopping rules: early stopping counts a streak of epochs without improvement.
#include "engine/train/stopping.hpp"

#include <future>

#include "engine/comm/elastic.hpp"
#include "engine/comm/gloo_communicator.hpp"
#include "engine/core/error.hpp"
#include "temp_dir.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;
using namespace laconic::train;

namespace {

/// The epoch after which the rule stops, for a metric series; -1 if it never does.
std::int64_t stops_after(const ComponentSpec& spec, const std::string& metric, const std::vector<double>& series) {
  auto rule = builtin_stop_rules().create(spec);
  for (std::size_t e = 0; e < series.size(); ++e)
    if (rule->should_stop({static_cast<std::int64_t>(e), {{metric, series[e]}}})) return static_cast<std::int64_t>(e);
  return -1;
}

}  // namespace

TEST_CASE("early stopping stops after `patience` epochs in a row without improvement", "[train][stopping]") {
  const ComponentSpec acc{"stopping", "early_stopping", {{"patience", std::int64_t{2}}}};
  // Best 0.8 at epoch 1; epochs 2 and 3 do not beat it: stop after epoch 3.
  CHECK(stops_after(acc, "test_accuracy", {0.5, 0.8, 0.79, 0.8, 0.9}) == 3);
  // An improvement resets the streak.
  CHECK(stops_after(acc, "test_accuracy", {0.5, 0.6, 0.55, 0.7, 0.65, 0.75}) == -1);
  // min_delta: gains of 0.005 do not count.
  const ComponentSpec delta{"stopping", "early_stopping", {{"patience", std::int64_t{2}}, {"min_delta", 0.01}}};
  CHECK(stops_after(delta, "test_accuracy", {0.5, 0.505, 0.51}) == 2);
  // Losses are minimized ("auto").
  const ComponentSpec loss{
      "stopping", "early_stopping", {{"metric", std::string("test_loss")}, {"patience", std::int64_t{1}}}};
  CHECK(stops_after(loss, "test_loss", {1.0, 0.8, 0.6, 0.7}) == 3);
  CHECK(stops_after({"stopping", "never", {}}, "test_loss", {1, 2, 3}) == -1);
  CHECK_THROWS_WITH(builtin_stop_rules().create({"stopping", "early_stopping", {{"metric", std::string("acc")}}}),
                    Catch::Contains("early_stopping.metric must be one of"));
  CHECK_THROWS_WITH(builtin_stop_rules().create({"stopping", "early_stopping", {{"patience", std::int64_t{0}}}}),
                    Catch::Contains("early_stopping.patience must be >= 1, got 0"));
}

TEST_CASE("an elastic run's workers hear worker 0's decision after a worker was lost", "[train][stopping][elastic]") {
  // Worker 2 is lost and workers 0 and 1 regroup without it: the decision reaches worker 1 (and
  // worker 0 sends nothing to the lost one), after each epoch, in the order worker 0 took them.
  using namespace std::chrono_literals;
  laconic::testing::TempDir dir;
  const auto communicator = [&](int rank) {
    comm::GlooOptions options;
    options.rank = rank;
    options.size = 3;
    options.store = comm::open_file_store(dir.path);
    options.timeout = 20s;
    options.elastic = std::make_shared<comm::ElasticMembership>(options.store, rank, 3, 0, 20s);
    return std::make_unique<comm::GlooCommunicator>(options);
  };
  const auto survive = [&](int rank, std::promise<void>& connected) {
    auto c = communicator(rank);
    connected.set_value();
    std::vector<float> v{1.0f};
    CHECK_THROWS_AS(c->allreduce_sum(v), CommError);
    c->abandon();
    c->regroup(c->membership().after_failure(4));
    const ComponentSpec loss{
        "stopping", "early_stopping", {{"metric", std::string("test_loss")}, {"patience", std::int64_t{1}}}};
    auto rule = rank == 0 ? builtin_stop_rules().create(loss) : nullptr;
    std::vector<bool> decisions;
    for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
      const double value = epoch == 2 ? 0.9 : 1.0 - 0.5 * static_cast<double>(epoch);  // worse at epoch 2
      decisions.push_back(decide_stop(rule.get(), nullptr, {epoch, {{"test_loss", value}}}, *c, 3));
    }
    return decisions;
  };
  std::promise<void> zero_up, one_up;
  auto zero = std::async(std::launch::async, [&] { return survive(0, zero_up); });
  auto one = std::async(std::launch::async, [&] { return survive(1, one_up); });
  {
    auto lost = communicator(2);
    zero_up.get_future().wait();
    one_up.get_future().wait();
    lost->abandon();  // as a process killed: its connections close
  }
  comm::open_file_store(dir.path)->set(comm::elastic_gone_key(2, 0), {});  // the controller reaped it
  const std::vector<bool> want{false, false, true};
  CHECK(zero.get() == want);
  CHECK(one.get() == want);
}
