#include <catch2/catch.hpp>

#include "engine/compress/none.hpp"

using namespace laconic::compress;

TEST_CASE("none sends the fp32 gradient unchanged, 4 bytes per element", "[compress][none]") {
  NoneCompressor none(NoneOptions{});
  std::vector<float> g = {1.5f, -2.0f, 0.0f, 3.25f};
  Payload payload;
  none.compress(g, payload);
  CHECK(payload.size() == 16);
  CHECK(none.summable());
  std::vector<float> dense = {1.0f, 1.0f, 1.0f, 1.0f};
  none.decompress_add(payload, dense);
  CHECK(dense == std::vector<float>{2.5f, -1.0f, 1.0f, 4.25f});
}
