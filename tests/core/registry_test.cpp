#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "engine/core/registry.hpp"

namespace {

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};

struct SquareOptions {
  double side = 1;
  static std::vector<laconic::FieldSpec> fields() {
    return {{"side", laconic::FieldType::Number, 1.0, "edge length"}};
  }
  static SquareOptions from(const laconic::ComponentSpec& spec) {
    SquareOptions o{spec.number("side")};
    if (!(o.side > 0))
      throw laconic::ConfigError(laconic::str_cat("square.side must be > 0, got ", o.side));
    return o;
  }
};

struct Square : Shape {
  explicit Square(SquareOptions o) : side(o.side) {}
  double area() const override { return side * side; }
  double side;
};

laconic::Registry<Shape> shapes() {
  laconic::Registry<Shape> r("shape");
  r.add<Square, SquareOptions>("square", "a square");
  return r;
}

laconic::ComponentSpec spec(const std::string& name,
                            std::map<std::string, laconic::Value> fields = {}) {
  return {"shape", name, std::move(fields)};
}

}  // namespace

TEST_CASE("a registry builds an entry with defaults filled in", "[core][registry]") {
  auto r = shapes();
  CHECK(r.create(spec("square"))->area() == 1.0);
  CHECK(r.create(spec("square", {{"side", std::int64_t{3}}}))->area() == 9.0);
}

TEST_CASE("an unknown name lists the known ones", "[core][registry]") {
  auto r = shapes();
  REQUIRE_THROWS_AS(r.create(spec("circle")), laconic::ConfigError);
  REQUIRE_THROWS_WITH(r.create(spec("circle")), "unknown shape 'circle'; known: square");
}

TEST_CASE("unknown fields, wrong types and bad values name the field and the value",
          "[core][registry]") {
  auto r = shapes();
  REQUIRE_THROWS_WITH(r.resolve(spec("square", {{"sides", 2.0}})),
                      "unknown field 'sides' in shape 'square'; known: side");
  REQUIRE_THROWS_WITH(r.resolve(spec("square", {{"side", std::string("big")}})),
                      "square.side must be a number, got string \"big\"");
  REQUIRE_THROWS_WITH(r.resolve(spec("square", {{"side", -2.0}})),
                      "square.side must be > 0, got -2");
}

TEST_CASE("a registry refuses a duplicate name", "[core][registry]") {
  auto r = shapes();
  REQUIRE_THROWS_AS((r.add<Square, SquareOptions>("square", "again")), laconic::InvariantError);
}

TEST_CASE("errors gather context on the way up", "[core][error]") {
  laconic::ConfigError e("ratio must be in (0, 1], got 2");
  e.add_context("while building compressor 'topk'");
  CHECK(std::string(e.what()) == "while building compressor 'topk': ratio must be in (0, 1], got 2");
}
