#include <catch2/catch.hpp>

#include "lua/hash.hpp"
#include "lua/sweep.hpp"

using laconic::Value;
using laconic::lua::fnv1a_hex;
using laconic::lua::format_name_value;

TEST_CASE("fnv1a_hex matches the published FNV-1a 64 test vectors", "[lua][hash]") {
  CHECK(fnv1a_hex("") == "cbf29ce484222325");
  CHECK(fnv1a_hex("a") == "af63dc4c8601ec8c");
  CHECK(fnv1a_hex("foobar") == "85944171f73967e8");
}

TEST_CASE("run-name values are written as a user would type them", "[lua][sweep]") {
  CHECK(format_name_value(Value{0.01}) == "0.01");
  CHECK(format_name_value(Value{1.0}) == "1");
  CHECK(format_name_value(Value{1e-05}) == "1e-05");
  CHECK(format_name_value(Value{std::int64_t{64}}) == "64");
  CHECK(format_name_value(Value{true}) == "true");
  CHECK(format_name_value(Value{std::string("ring")}) == "ring");
}
