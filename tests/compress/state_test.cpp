// Checkpointable state: for every registered compressor, a fresh instance that loads the state
// saved after a few steps sends exactly the payloads the original goes on to send.
#include <set>

#include <catch2/catch.hpp>

#include "added_compressor.hpp"
#include "compress_test_support.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

// The built-in compressors and one added the way a new one is (added_compressor.hpp): the
// tests below cover it without an edit.
const Registry<Compressor>& registry() { return laconic::testing::registry_with_added_compressor(); }

struct SoloReducer : SumReducer {
  void sum(std::span<float>) override {}
  int workers() const override { return 1; }
};

const std::vector<LayerShape> kShapes = {{20, 30}, {30}, {12, 10, 1, 1}};
constexpr std::size_t kSize = 20 * 30 + 30 + 120;

/// One step's output: the payload, or (for a compressor that exchanges itself) the update.
std::vector<std::uint8_t> step(Compressor& c, unsigned seed) {
  auto g = testing::random_gradient(kSize, seed);
  if (MultiRoundCompressor* multi_round = c.multi_round()) {
    SoloReducer reducer;
    multi_round->exchange(g, reducer);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(g.data());
    return {bytes, bytes + g.size() * sizeof(float)};
  }
  Payload payload;
  c.compress(g, payload);
  return payload;
}

std::unique_ptr<Compressor> fresh(const ComponentSpec& spec) {
  auto c = build_compressor(registry(), spec, kShapes, {7, 1});
  c->advance({0, 0, nullptr});
  return c;
}

}  // namespace

TEST_CASE("every compressor restored from its saved state continues with the same payloads", "[compress][state]") {
  // Compressors whose later payloads depend on what came before (residual, momentum, RNG, step).
  const std::set<std::string> stateful = {"alternating_halves",
                                          "block_randomk",
                                          "chain",
                                          "dgc",
                                          "ef_signsgd",
                                          "onebit",
                                          "powersgd",
                                          "qsgd",
                                          "quantized_allreduce",
                                          "randomk",
                                          "signum",
                                          "terngrad",
                                          "threshold",
                                          "topk"};
  std::vector<ComponentSpec> specs;
  for (const ComponentInfo& info : registry().infos()) specs.push_back({"compressor", info.name, {}});
  specs.push_back({"compressor", "topk", {{"scope", std::string("layer")}}});
  specs.push_back({"compressor", "qsgd", {{"min_size", std::int64_t{100}}}});
  for (const ComponentSpec& spec : specs) {
    INFO(spec.name << (spec.fields.empty() ? "" : " (scoped)"));
    auto original = fresh(spec);
    for (unsigned s = 0; s < 3; ++s) step(*original, s);
    std::vector<std::uint8_t> saved;
    StateWriter writer(saved);
    original->save_state(writer);

    auto restored = fresh(spec);
    StateReader reader(saved);
    restored->load_state(reader);
    CHECK(reader.done());
    auto unrestored = fresh(spec);
    bool differs = false;
    for (unsigned s = 3; s < 6; ++s) {
      const auto expected = step(*original, s);
      CHECK(step(*restored, s) == expected);
      differs = differs || step(*unrestored, s) != expected;
    }
    if (stateful.count(spec.name)) CHECK(differs);
  }
}

TEST_CASE("a truncated or mismatched state is refused", "[compress][state]") {
  auto topk = fresh({"compressor", "topk", {}});
  step(*topk, 1);
  std::vector<std::uint8_t> saved;
  StateWriter writer(saved);
  topk->save_state(writer);
  saved.resize(saved.size() - 3);
  StateReader reader(saved);
  CHECK_THROWS_AS(fresh({"compressor", "topk", {}})->load_state(reader), InvariantError);

  auto qsgd = fresh({"compressor", "qsgd", {{"error_feedback", false}}});
  std::vector<std::uint8_t> other;
  StateWriter w(other);
  w.array(std::vector<std::uint64_t>(3, 0));  // 3 words where an RNG has 32
  StateReader r(other);
  CHECK_THROWS_WITH(qsgd->load_state(r), Catch::EndsWith("saved state holds 3 elements where 32 are expected"));
}
