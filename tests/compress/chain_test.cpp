// chain { first, second }: the same bytes and the same decoded update as running the two
// compressors by hand (first's indices, second's codec on first's values), for both kinds of
// first; error feedback over the whole chain; which children are refused.
#include <cstring>

#include <catch2/catch.hpp>

#include "compress_test_support.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/compress/chain.hpp"
#include "engine/compress/half.hpp"
#include "engine/compress/qsgd.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

ComponentSpec spec(const std::string& name, std::map<std::string, Value> fields = {}) {
  return ComponentSpec{"compressor", name, std::move(fields)};
}

ComponentSpec chain(ComponentSpec first, ComponentSpec second, bool error_feedback) {
  return spec(
      "chain",
      {{"first", nested(std::move(first))}, {"second", nested(std::move(second))}, {"error_feedback", error_feedback}});
}

}  // namespace

TEST_CASE("chain of topk and qsgd sends topk's indices and qsgd's payload of the kept values", "[compress][chain]") {
  const auto registry = builtin_compressors();
  const auto topk = spec("topk", {{"ratio", 0.05}, {"error_feedback", false}});
  const auto qsgd = spec("qsgd", {{"levels", std::int64_t{4}}, {"bucket_size", std::int64_t{16}}});
  auto c = registry.create(chain(topk, qsgd, false));
  CHECK_FALSE(c->summable());
  c->set_seed(9, 1);
  const auto g = testing::random_gradient(1000, 3);
  Payload payload;
  c->compress(g, payload);

  // By hand: topk's payload, then qsgd (seeded as the chain seeds its second) on its values.
  auto first = registry.create(topk);
  auto second = registry.create(qsgd);
  second->set_seed(derive_seed(9, 2), 1);
  Payload sparse, quantized;
  first->compress(g, sparse);
  const std::size_t k = 50;
  std::vector<float> values(k);
  std::memcpy(values.data(), sparse.data() + 8 + 4 * k, 4 * k);
  second->compress(values, quantized);

  REQUIRE(payload.size() == 8 + 4 * k + qsgd_payload_bytes(k, 16, 4));
  CHECK(std::equal(sparse.begin(), sparse.begin() + 8 + 4 * k, payload.begin()));
  CHECK(std::equal(quantized.begin(), quantized.end(), payload.begin() + 8 + 4 * k));

  const auto decoded = testing::decode(*c, payload, g.size());
  const auto values_decoded = testing::decode(*second, quantized, k);
  std::vector<float> expected(g.size(), 0.0f);
  for (std::size_t i = 0; i < k; ++i) {
    std::uint32_t index;
    std::memcpy(&index, sparse.data() + 8 + 4 * i, 4);
    expected[index] += values_decoded[i];
  }
  CHECK(decoded == expected);
}

TEST_CASE(
    "chain of a shared-seed sparsifier compresses its value array and stays summable "
    "when the second is",
    "[compress][chain]") {
  const auto registry = builtin_compressors();
  const auto g = testing::random_gradient(400, 8);
  for (const std::string second_name : {"fp16", "none"}) {
    const auto first_spec = spec("block_randomk", {{"ratio", 0.1}, {"error_feedback", false}});
    auto c = registry.create(chain(first_spec, spec(second_name), false));
    CHECK(c->summable() == (second_name == "none"));
    c->set_seed(4, 0);
    Payload payload;
    c->compress(g, payload);
    CHECK(payload.size() == (second_name == "none" ? 40 * 4 : half_payload_bytes(40)));

    auto first = registry.create(first_spec);
    first->set_seed(derive_seed(4, 1), 0);
    Payload block;
    first->compress(g, block);
    const auto exact = testing::decode(*first, block, g.size());
    const auto decoded = testing::decode(*c, payload, g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      // fp16 keeps 11 significant bits: relative error <= 2^-11.
      CHECK(decoded[i] == Approx(exact[i]).epsilon(1.0 / 2048).margin(1e-7));
      CHECK((decoded[i] == 0.0f) == (exact[i] == 0.0f));
    }
  }
}

TEST_CASE("chain with error feedback: what was sent plus the residual equals what was fed in", "[compress][chain]") {
  const auto registry = builtin_compressors();
  ChainCompressor c(ChainOptions::fields().read(
      registry.resolve(chain(spec("topk", {{"ratio", 0.1}}), spec("qsgd", {{"levels", std::int64_t{2}}}), true))));
  c.set_seed(2, 0);
  std::vector<double> fed(500, 0.0), sent(500, 0.0);
  for (int step = 0; step < 20; ++step) {
    const auto g = testing::random_gradient(500, 50 + static_cast<unsigned>(step));
    Payload payload;
    c.compress(g, payload);
    const auto decoded = testing::decode(c, payload, g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      fed[i] += g[i];
      sent[i] += decoded[i];
    }
  }
  for (std::size_t i = 0; i < fed.size(); ++i) REQUIRE(sent[i] + c.residual()[i] == Approx(fed[i]).margin(1e-4));
}

TEST_CASE("chain switches its children's error feedback off when it feeds back itself", "[compress][chain]") {
  const auto registry = builtin_compressors();
  const auto on = ChainOptions::fields().read(registry.resolve(spec("chain")));
  CHECK(on.first.name == "topk");
  CHECK(on.first.flag("error_feedback") == false);
  CHECK(on.second.name == "qsgd");
  CHECK(on.second.flag("error_feedback") == false);
  const auto off = ChainOptions::fields().read(registry.resolve(spec("chain", {{"error_feedback", false}})));
  CHECK(off.first.flag("error_feedback") == true);  // topk's own default
  // The resolved configuration (what the database stores) says so too.
  CHECK(registry.resolve(spec("chain")).component("first").flag("error_feedback") == false);
}

TEST_CASE("chain refuses children that cannot be chained, naming them", "[compress][chain]") {
  const auto registry = builtin_compressors();
  CHECK_THROWS_WITH(registry.resolve(chain(spec("qsgd"), spec("fp16"), true)),
                    "chain.first must be a sparsifier whose values can be compressed further (topk, "
                    "threshold, dgc, randomk, block_randomk), got qsgd");
  CHECK_THROWS_WITH(registry.resolve(chain(spec("topk"), spec("powersgd"), true)),
                    "chain cannot hold powersgd: it runs its own collectives");
  CHECK_THROWS_WITH(registry.resolve(chain(spec("topk", {{"ratio", 1.5}}), spec("fp16"), true)),
                    "in chain.first: topk.ratio must be in (0, 1], got 1.5");
  CHECK_THROWS_WITH(registry.resolve(spec("chain", {{"first", 3.0}})), "chain.first must be a component, got number 3");
}

TEST_CASE("a chain decodes on its own only when its first part does", "[compress][chain]") {
  const auto registry = builtin_compressors();
  CHECK(registry.create(chain(spec("topk"), spec("qsgd"), true))->self_decoding());
  CHECK_FALSE(registry.create(chain(spec("block_randomk"), spec("fp16"), true))->self_decoding());
  CHECK_FALSE(registry.create(spec("randomk"))->self_decoding());
  CHECK(registry.create(spec("randomk", {{"shared_seed", false}}))->self_decoding());
}
