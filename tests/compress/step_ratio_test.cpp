#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "engine/compress/builtin.hpp"
#include "engine/compress/dgc.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/callbacks.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

/// The experiment file's functions as a worker would call them: "halving" is
/// 0.2 * 0.5^epoch, "by_step" 0.01 * (step + 1), "broken" 1.5.
struct ScheduleCallbacks : RunCallbacks {
  bool has(const std::string&) const override { return false; }
  double learning_rate(std::int64_t, std::int64_t) override { return 0; }
  bool on_epoch_end(std::int64_t, const std::map<std::string, double>&) override { return false; }
  double step_function(const std::string& id, std::int64_t epoch, std::int64_t step) override {
    if (id == "halving") return 0.2 * std::pow(0.5, static_cast<double>(epoch));
    if (id == "by_step") return 0.01 * static_cast<double>(step + 1);
    return 1.5;
  }
};

std::vector<float> nonzero_gradient(std::size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  std::vector<float> g(n);
  for (float& v : g) v = (rng() % 2 ? 1.0f : -1.0f) * u(rng);
  return g;
}

/// Elements one compress() of a fresh gradient sends (decoded by the same instance).
std::size_t sent_count(Compressor& c, const std::vector<float>& g) {
  Payload payload;
  c.compress(g, payload);
  std::vector<float> dense(g.size(), 0.0f);
  c.decompress_add(payload, dense);
  std::size_t count = 0;
  for (float v : dense) count += v != 0.0f;
  return count;
}

}  // namespace

TEST_CASE(
    "a sparsifier whose ratio is a function sends ceil(f(epoch, step) * n) elements at "
    "every step",
    "[compress][step]") {
  const auto registry = builtin_compressors();
  ScheduleCallbacks callbacks;
  const std::size_t n = 1000;
  const auto g = nonzero_gradient(n);
  for (const std::string name : {"topk", "randomk", "block_randomk"}) {
    SECTION(name) {
      auto c = build_compressor(
          registry, {"compressor", name, {{"ratio", StepFunction{"halving"}}, {"error_feedback", false}}}, {{n}}, {1, 0});
      for (std::int64_t epoch = 0; epoch < 4; ++epoch) {
        c->advance({epoch, epoch * 10, &callbacks});
        CHECK(sent_count(*c, g) == topk_count(0.2 * std::pow(0.5, epoch), n));
      }
    }
  }
  SECTION("chain and scope layer pass the point on") {
    auto chain = build_compressor(registry,
                                  {"compressor",
                                   "chain",
                                   {{"first", nested({"compressor", "topk", {{"ratio", StepFunction{"by_step"}}}})},
                                    {"second", nested({"compressor", "none", {}})}}},
                                  {{n}}, {});
    auto layered = build_compressor(
        registry, {"compressor", "topk", {{"ratio", StepFunction{"by_step"}}, {"scope", "layer"}}}, {{600}, {400}}, {});
    for (std::int64_t step : {0, 4, 19}) {
      chain->advance({0, step, &callbacks});
      layered->advance({0, step, &callbacks});
      const double ratio = 0.01 * static_cast<double>(step + 1);
      CHECK(sent_count(*chain, g) == topk_count(ratio, n));
      CHECK(sent_count(*layered, g) == topk_count(ratio, 600) + topk_count(ratio, 400));
    }
  }
  SECTION("dgc: the function's value, still warmed up over the first epochs") {
    DgcOptions options = DgcOptions::fields().read(
        registry.resolve({"compressor", "dgc", {{"ratio", StepFunction{"by_step"}}, {"warmup", std::int64_t{2}}}}));
    DgcCompressor dgc(options);
    dgc.advance({0, 0, &callbacks});
    CHECK(dgc.current_ratio() == 0.25);  // max(0.01, 0.25^1)
    dgc.advance({2, 49, &callbacks});
    CHECK(dgc.current_ratio() == Approx(0.5));  // after warm-up: f itself
  }
}

TEST_CASE(
    "a ratio function's bad value names the function and the step; a constant is checked "
    "when built",
    "[compress][step]") {
  const auto registry = builtin_compressors();
  ScheduleCallbacks callbacks;
  auto c = registry.create({"compressor", "topk", {{"ratio", StepFunction{"broken"}}}});
  CHECK_THROWS_WITH(c->advance({1, 12, &callbacks}),
                    "topk.ratio (a function) returned 1.5 at epoch 1, step 12; it must be in "
                    "(0, 1]");
  // Without the point (no advance()), a function's ratio is not a number: refused, not guessed.
  Payload payload;
  const auto g = nonzero_gradient(10);
  CHECK_THROWS_AS(c->compress(g, payload), InvariantError);
  CHECK_THROWS_WITH(registry.create({"compressor", "randomk", {{"ratio", 0.0}}}),
                    Catch::Contains("randomk.ratio must be in (0, 1], got 0"));
  // A constant ratio ignores the point, even without callbacks.
  auto constant = registry.create({"compressor", "topk", {{"ratio", 0.1}, {"error_feedback", false}}});
  constant->advance({3, 3, nullptr});
  CHECK(sent_count(*constant, nonzero_gradient(100)) == 10);
}
