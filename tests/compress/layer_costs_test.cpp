// A compressor measured layer by layer (engine/compress/layer_costs.hpp): one row per layer with
// the payload the compressor sends for that layer alone (its documented size), positive times,
// and nothing for compressors whose costs are not a payload's.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/compress/builtin.hpp"
#include "engine/compress/layer_costs.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

ComponentSpec measured_spec(const std::string& name, std::map<std::string, Value> fields = {}) {
  return {"compressor", name, std::move(fields)};
}

const std::vector<LayerShape> kShapes = {{6, 1, 5, 5}, {6}, {120, 84}, {10}};

}  // namespace

TEST_CASE("each layer's payload is the compressor's for that layer alone") {
  const auto registry = builtin_compressors();
  const LayerTiming quick{0.001, 5};
  const auto topk = measure_layer_costs(registry, measured_spec("topk", {{"ratio", 0.01}}), kShapes, quick);
  REQUIRE(topk);
  CHECK_FALSE(topk->summable);
  REQUIRE(topk->layers.size() == 4);
  const std::size_t elements[] = {150, 6, 10080, 10};
  for (std::size_t l = 0; l < 4; ++l) {
    const auto& row = topk->layers[l];
    CHECK(row.elements == elements[l]);
    const double k = std::ceil(0.01 * static_cast<double>(elements[l]));
    CHECK(row.payload_bytes == 8 + 8 * k);  // docs/compressors.md: 8 + 8k
    CHECK(row.compress_seconds > 0);
    CHECK(row.decode_seconds > 0);
    CHECK(row.dense_compress_seconds > 0);
    CHECK(row.dense_decode_seconds > 0);
  }
  const auto randomk = measure_layer_costs(registry, measured_spec("randomk", {{"ratio", 0.1}, {"shared_seed", true}}),
                                           kShapes, quick);
  REQUIRE(randomk);
  CHECK(randomk->summable);
  CHECK(randomk->layers[2].payload_bytes == 4 * 1008);  // 4k
}

TEST_CASE("a compressor that sends fp32 or exchanges itself has no per-layer payload costs") {
  const auto registry = builtin_compressors();
  CHECK_FALSE(measure_layer_costs(registry, measured_spec("none"), kShapes, {0.001, 3}));
  CHECK_FALSE(measure_layer_costs(registry, measured_spec("powersgd", {{"rank", std::int64_t{2}}}), kShapes, {0.001, 3}));
}
