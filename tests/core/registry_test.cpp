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

namespace {

struct PairOptions {
  laconic::ComponentSpec left;
  static std::vector<laconic::FieldSpec> fields() {
    return {{"left", laconic::FieldType::Component,
             laconic::nested({"shape", "square", {{"side", 2.0}}}), "a shape"}};
  }
  static PairOptions from(const laconic::ComponentSpec& spec) { return {spec.component("left")}; }
};

struct Pair : Shape {
  explicit Pair(PairOptions o) : left(shapes().create(o.left)) {}
  double area() const override { return 2 * left->area(); }
  std::unique_ptr<Shape> left;
};

}  // namespace

TEST_CASE("nested components are resolved by the owner's registry and survive JSON",
          "[core][registry]") {
  laconic::Registry<Shape> r("shape");
  r.add<Square, SquareOptions>("square", "a square");
  r.add<Pair, PairOptions>("pair", "two of a shape");

  const auto defaults = r.resolve(spec("pair"));
  CHECK(defaults.component("left").number("side") == 2.0);
  CHECK(r.create(spec("pair"))->area() == 8.0);

  const auto given = r.resolve(spec("pair", {{"left", laconic::nested({"", "square", {}})}}));
  CHECK(given.component("left").kind == "shape");
  CHECK(given.component("left").number("side") == 1.0);  // square's default, filled in
  CHECK(laconic::format_value(given.fields.at("left")) == "square { side = 1 }");

  const auto json = given.to_json();
  CHECK(json.dump() == R"({"left":{"name":"square","side":1.0},"name":"pair"})");
  CHECK(r.resolve(laconic::ComponentSpec::from_json("shape", json)) == given);

  CHECK_THROWS_WITH(
      r.resolve(spec("pair", {{"left", laconic::nested({"", "square", {{"side", -1.0}}})}})),
      "in pair.left: square.side must be > 0, got -1");
  CHECK_THROWS_WITH(
      r.resolve(spec("pair", {{"left", laconic::nested({"model", "lenet5", {}})}})),
      "pair.left must be a shape, got model 'lenet5'");
  CHECK_THROWS_WITH(r.resolve(spec("pair", {{"left", 1.0}})),
                    "pair.left must be a component, got number 1");
}
