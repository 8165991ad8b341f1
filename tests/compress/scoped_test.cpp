#include <catch2/catch.hpp>

#include <cstring>

#include "compress_test_support.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/compress/none.hpp"
#include "engine/compress/scoped.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

ScopedCompressor::Factory topk_factory(double ratio) {
  return [ratio] { return std::make_unique<TopkCodec>(ratio); };
}

// Reference: Top-k applied to a part of the gradient on its own.
std::vector<float> topk_of(const std::vector<float>& part, double ratio) {
  TopkCodec codec(ratio);
  Payload p;
  codec.compress(part, p);
  return decode(codec, p, part.size());
}

}  // namespace

TEST_CASE("layer scope compresses every layer on its own", "[compress][scope]") {
  const std::vector<std::size_t> layers = {1000, 37, 5000, 8};
  auto g = random_gradient(6045, 5);
  ScopedCompressor scoped(layers, Scope::Layer, 0, topk_factory(0.05));
  CHECK(scoped.segment_count() == 4);
  Payload payload;
  scoped.compress(g, payload);
  auto dense = decode(scoped, payload, g.size());
  std::size_t offset = 0;
  for (std::size_t size : layers) {
    std::vector<float> part(g.begin() + offset, g.begin() + offset + size);
    auto expected = topk_of(part, 0.05);
    REQUIRE(std::vector<float>(dense.begin() + offset, dense.begin() + offset + size) == expected);
    offset += size;
  }
  // Header: segment count and one length per segment, then 4 Top-k payloads.
  std::size_t expected_bytes = 4 * (1 + layers.size());
  for (std::size_t size : layers) expected_bytes += topk_payload_bytes(topk_count(0.05, size));
  CHECK(payload.size() == expected_bytes);
}

TEST_CASE("layers below min_size go dense; global scope compresses the rest together", "[compress][scope]") {
  const std::vector<std::size_t> layers = {3000, 20, 4000, 10};  // the small ones sit between
  auto g = random_gradient(7030, 6);
  ScopedCompressor scoped(layers, Scope::Global, 100, topk_factory(0.01));
  CHECK(scoped.segment_count() == 2);
  Payload payload;
  scoped.compress(g, payload);
  auto dense = decode(scoped, payload, g.size());
  // Small layers arrive exactly.
  for (std::size_t i = 3000; i < 3020; ++i) CHECK(dense[i] == g[i]);
  for (std::size_t i = 7020; i < 7030; ++i) CHECK(dense[i] == g[i]);
  // The large layers: one Top-k over their concatenation.
  std::vector<float> big(g.begin(), g.begin() + 3000);
  big.insert(big.end(), g.begin() + 3020, g.begin() + 7020);
  auto expected = topk_of(big, 0.01);
  std::vector<float> got(dense.begin(), dense.begin() + 3000);
  got.insert(got.end(), dense.begin() + 3020, dense.begin() + 7020);
  CHECK(got == expected);
  CHECK(payload.size() == 4 * 3 + 30 * 4 + topk_payload_bytes(topk_count(0.01, 7000)));
}

TEST_CASE("summable compressors keep a headerless payload that sums across workers", "[compress][scope]") {
  const std::vector<std::size_t> layers = {100, 3, 50};
  auto make_none = [] { return std::make_unique<NoneCompressor>(NoneOptions{}); };
  ScopedCompressor a(layers, Scope::Layer, 10, make_none), b(layers, Scope::Layer, 10, make_none);
  REQUIRE(a.summable());
  auto ga = random_gradient(153, 1), gb = random_gradient(153, 2);
  Payload pa, pb;
  a.compress(ga, pa);
  b.compress(gb, pb);
  REQUIRE(pa.size() == 153 * 4);
  // What allreduce does: sum the payloads as float arrays.
  std::vector<float> fa(153), fb(153);
  std::memcpy(fa.data(), pa.data(), pa.size());
  std::memcpy(fb.data(), pb.data(), pb.size());
  for (std::size_t i = 0; i < 153; ++i) fa[i] += fb[i];
  std::memcpy(pa.data(), fa.data(), pa.size());
  auto dense = decode(a, pa, 153);
  a.aggregate(dense, 2);
  for (std::size_t i = 0; i < 153; ++i) CHECK(dense[i] == Approx((ga[i] + gb[i]) / 2));
}

TEST_CASE("scope and min_size are fields of every compressor, checked by name", "[compress][scope]") {
  auto registry = builtin_compressors();
  const std::vector<LayerShape> layers = {{10}, {2, 5}};
  REQUIRE_THROWS_WITH(build_compressor(registry, {"compressor", "topk", {{"scope", std::string("tensor")}}}, layers, {}),
                      "topk.scope must be \"global\" or \"layer\", got \"tensor\"");
  REQUIRE_THROWS_WITH(build_compressor(registry, {"compressor", "none", {{"min_size", std::int64_t{-1}}}}, layers, {}),
                      "none.min_size must be >= 0, got -1");
  auto plain = build_compressor(registry, {"compressor", "topk", {}}, layers, {});
  CHECK(dynamic_cast<ScopedCompressor*>(plain.get()) == nullptr);
  auto layered = build_compressor(registry, {"compressor", "topk", {{"scope", std::string("layer")}}}, layers, {});
  CHECK(dynamic_cast<ScopedCompressor*>(layered.get()) != nullptr);
}
