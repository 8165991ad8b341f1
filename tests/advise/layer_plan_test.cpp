// Which layers to leave dense (reports/layer_plan.hpp), against costs whose answer is worked out
// by hand: each layer's seconds each way, the min_size whose split costs least, the collective's
// factors for gathered and summed payloads, and the fact's text read back.
#include <catch2/catch.hpp>

#include "advise/layer_plan.hpp"
#include "engine/core/layer_costs.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::advise;

namespace {

// 1 Gbit/s with every byte payload: 8 ns per byte, no per-message cost.
LinkSpec plan_gigabit() {
  LinkSpec link;
  link.text = "1Gbit";
  link.bits_per_second = 1e9;
  link.payload_fraction = 1;
  return link;
}

// A codec with a fixed cost of 20 us per compress and 1 us per decode, sending a tenth of the
// bytes; fp32 costs 1 us each way.
LayerCodecCost fixed_cost_layer(std::size_t elements) {
  return {elements, 0.4 * static_cast<double>(elements), 20e-6, 1e-6, 1e-6, 1e-6};
}

}  // namespace

TEST_CASE("a layer's seconds each way are its bytes on the link as the collective sends them, plus the codec") {
  LayerCodecCosts costs;
  costs.layers = {fixed_cost_layer(1000)};
  SECTION("gathered: (p-1) x payload sent, p payloads decoded") {
    const LayerPlan plan = plan_layers(costs, plan_gigabit(), 4);
    const LayerChoice& l = plan.layers.at(0);
    CHECK(l.dense_bytes == 4000);
    CHECK(l.compressed_bytes == 400);
    CHECK(l.dense_seconds == Approx(3 * 4000 * 8e-9 + 1e-6 + 4 * 1e-6));
    CHECK(l.compressed_seconds == Approx(3 * 400 * 8e-9 + 20e-6 + 4 * 1e-6));
  }
  SECTION("summed: 2 (p-1)/p x payload sent, one sum decoded") {
    costs.summable = true;
    const LayerPlan plan = plan_layers(costs, plan_gigabit(), 4);
    const LayerChoice& l = plan.layers.at(0);
    CHECK(l.dense_seconds == Approx(1.5 * 4000 * 8e-9 + 2e-6));
    CHECK(l.compressed_seconds == Approx(1.5 * 400 * 8e-9 + 21e-6));
  }
}

TEST_CASE("min_size is the split that costs least: small layers, whose fixed codec cost outweighs their bytes, dense") {
  // Gathered at 4 workers, a layer of n elements saves 3 x 3.6 n x 8 ns = 86.4 n ns of sending
  // and costs 19 us more of codec: compressing pays from n = 220 on.
  LayerCodecCosts costs;
  costs.layers = {fixed_cost_layer(150),   fixed_cost_layer(6),   fixed_cost_layer(2400), fixed_cost_layer(16),
                  fixed_cost_layer(48000), fixed_cost_layer(120), fixed_cost_layer(84),   fixed_cost_layer(10)};
  const LayerPlan plan = plan_layers(costs, plan_gigabit(), 4);
  CHECK(plan.min_size == 151);
  CHECK(plan.per_layer_best == Approx(plan.planned));  // the split at 151 is each layer's own best way
  for (const LayerChoice& l : plan.layers) CHECK(l.dense == (l.elements <= 150));
  CHECK(plan.planned == Approx(plan.per_layer_best));
  CHECK(plan.planned < plan.all_compressed);
  CHECK(plan.planned < plan.all_dense);
  double by_hand = 0;
  for (const LayerChoice& l : plan.layers) by_hand += l.dense ? l.dense_seconds : l.compressed_seconds;
  CHECK(plan.planned == Approx(by_hand));
  CHECK_THAT(layer_plan_summary(plan), Catch::Contains("min_size = 151: 6 of 8 layers (386 elements) dense"));
  const Table table = layer_plan_table(plan, "topk ratio=0.1");
  REQUIRE(table.rows.size() == 8);
  CHECK(table.rows[2].back() == "compressed");
  CHECK(table.rows[1].back() == "dense");
  CHECK(table.csv.rows[4][3] != "");
}

TEST_CASE("on a slow link every layer is compressed; on a fast one none is") {
  LayerCodecCosts costs;
  costs.layers = {fixed_cost_layer(150), fixed_cost_layer(6), fixed_cost_layer(2400)};
  LinkSpec slow = plan_gigabit();
  slow.bits_per_second = 1e6;
  const LayerPlan compress_all = plan_layers(costs, slow, 4);
  CHECK(compress_all.min_size == 0);
  CHECK(compress_all.planned == compress_all.all_compressed);
  CHECK_THAT(layer_plan_summary(compress_all), Catch::Contains("compress every layer"));
  LinkSpec fast = plan_gigabit();
  fast.bits_per_second = 1e12;
  const LayerPlan dense_all = plan_layers(costs, fast, 4);
  CHECK(dense_all.min_size == 2401);
  CHECK(dense_all.planned == Approx(dense_all.all_dense));
  CHECK_THAT(layer_plan_summary(dense_all), Catch::Contains("leave every layer dense"));
}

TEST_CASE("the fact layer_costs reads back what was written, and nothing of another version") {
  LayerCodecCosts costs;
  costs.summable = true;
  costs.layers = {fixed_cost_layer(150), {7, 36, 1.5e-6, 2.5e-7, 3e-7, 4e-7}};
  CHECK(LayerCodecCosts::from_json_text(costs.to_json_text()) == costs);
  std::string other = costs.to_json_text();
  other.replace(other.find("\"version\":1"), 11, "\"version\":9");
  CHECK(LayerCodecCosts::from_json_text(other).layers.empty());
  CHECK(LayerCodecCosts::from_json_text("not json").layers.empty());
}

TEST_CASE("on a hardware profile the codec's seconds are its per call and per element costs, the bytes as measured") {
  LayerCodecCosts measured;
  measured.layers = {fixed_cost_layer(6), fixed_cost_layer(100000)};
  CompressorCost gpu;
  gpu.compress = {8e-6, 1e-11};
  gpu.decompress = {7e-6, 2e-12};
  const LayerCodecCosts projected = costs_on_hardware(measured, gpu);
  REQUIRE(projected.layers.size() == 2);
  CHECK(projected.layers[1].payload_bytes == measured.layers[1].payload_bytes);
  CHECK(projected.layers[1].compress_seconds == Approx(8e-6 + 1e-11 * 100000));
  CHECK(projected.layers[1].decode_seconds == Approx(7e-6 + 2e-12 * 100000));
  CHECK(projected.layers[0].dense_compress_seconds == 0);
  // At 100 Gbit/s and 2 workers a launch's 8 us outweighs the 6-element layer's bytes, not the
  // big layer's (at 8 workers decoding 8 gathered payloads costs more than summing it dense).
  LinkSpec fast = plan_gigabit();
  fast.bits_per_second = 1e11;
  const LayerPlan plan = plan_layers(projected, fast, 2);
  CHECK(plan.min_size == 7);
  CHECK(plan.layers[0].dense);
  CHECK_FALSE(plan.layers[1].dense);
}

TEST_CASE("where no threshold gives each layer its own best way, the summary says what that would cost") {
  // A big layer whose codec is slow (dense is best) after small ones that compress well; summed
  // payloads, so that the collective is the same for every split.
  LayerCodecCosts costs;
  costs.summable = true;
  costs.layers = {
      {1000, 40, 1e-6, 1e-7, 1e-6, 1e-7}, {2000, 80, 1e-6, 1e-7, 1e-6, 1e-7}, {100000, 4000, 5e-2, 1e-2, 1e-6, 1e-7}};
  const LayerPlan plan = plan_layers(costs, plan_gigabit(), 4);
  CHECK(plan.min_size == 100001);  // no threshold leaves only the big layer dense: all dense is the best split
  CHECK(plan.per_layer_best < plan.planned);
  CHECK_THAT(layer_plan_summary(plan), Catch::Contains("each layer its own best way: "));
  LayerCodecCosts uniform;
  uniform.layers = {fixed_cost_layer(150), fixed_cost_layer(48000)};
  CHECK_THAT(layer_plan_summary(plan_layers(uniform, plan_gigabit(), 4)), !Catch::Contains("own best way"));
}

TEST_CASE("a split's figures: bytes sent and codec seconds of its layers, summed once every layer is dense") {
  LayerCodecCosts costs;  // gathered at 4 workers
  costs.layers = {fixed_cost_layer(150), fixed_cost_layer(2400)};
  const LayerPlan plan = plan_layers(costs, plan_gigabit(), 4);
  const LayerSplit half = split_at(plan, 151);  // the small layer dense, in a gathered payload
  CHECK(half.dense_layers == 1);
  CHECK_FALSE(half.summed);
  CHECK(half.link_bytes == Approx(3 * (600 + 960)));
  CHECK(half.codec_seconds == Approx((1e-6 + 4 * 1e-6) + (20e-6 + 4 * 1e-6)));
  CHECK(half.seconds == Approx(3 * 1560 * 8e-9 + half.codec_seconds));
  CHECK(split_at(plan, 0).seconds == Approx(plan.all_compressed));
  // Every layer dense: the payload sums, so an allreduce carries it (1.5 x its bytes at 4
  // workers) and each worker decodes one sum, not 4 gathered payloads.
  const LayerSplit dense = split_at(plan, 2401);
  CHECK(dense.summed);
  CHECK(dense.link_bytes == Approx(1.5 * 4 * 2550));
  CHECK(dense.codec_seconds == Approx(2 * (1e-6 + 1e-6)));
  CHECK(plan.all_dense == Approx(dense.seconds));
}

TEST_CASE("a split pays the link's cost per message for the messages of its collective") {
  LayerCodecCosts costs;  // gathered at 4 workers: 3 messages a step; the dense allreduce 6
  costs.layers = {fixed_cost_layer(150), fixed_cost_layer(2400)};
  LinkSpec link = plan_gigabit();  // so fast that bytes barely count: the codec and the messages do
  link.bits_per_second = 1e12;
  link.latency_seconds = 50e-6;
  link.overhead_seconds = 300e-6;
  const LayerPlan without = plan_layers(costs, link, 4);
  const LayerPlan plan = plan_layers(costs, link, 4, {3, 6});
  CHECK(split_at(plan, 0).messages == 3);
  CHECK(split_at(plan, 151).messages == 3);
  CHECK(split_at(plan, 2401).messages == 6);
  CHECK(split_at(plan, 151).seconds == Approx(split_at(without, 151).seconds + 3 * 350e-6));
  CHECK(plan.all_dense == Approx(without.all_dense + 6 * 350e-6));
  // Without per-message costs every layer dense is cheapest (no codec); 3 more messages of 350 us
  // each make it dearer than compressing the big layer.
  CHECK(without.min_size == 2401);
  CHECK(plan.min_size == 151);
  CHECK(plan.per_layer_best == Approx(plan.planned));  // the split at 151 is each layer's own best way
  // A summable candidate sends its own messages whatever the split.
  costs.summable = true;
  CHECK(split_at(plan_layers(costs, link, 4, {6, 6}), 2401).messages == 6);
}
