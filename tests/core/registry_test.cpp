#include <catch2/catch.hpp>

#include "engine/core/callbacks.hpp"
#include "engine/core/error.hpp"
#include "engine/core/registry.hpp"
#include "engine/core/step_value.hpp"

namespace {

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};

struct SquareOptions {
  double side = 1;
  static laconic::OptionFields<SquareOptions> fields() {
    return laconic::OptionFields<SquareOptions>().number("side", &SquareOptions::side, "edge length",
                                                         laconic::above(0));
  }
};

struct CircleOptions {
  laconic::StepValue radius = 1;
  static laconic::OptionFields<CircleOptions> fields() {
    return laconic::OptionFields<CircleOptions>().step_value("radius", &CircleOptions::radius, "radius");
  }
};

struct Circle : Shape {
  explicit Circle(CircleOptions o) : radius(o.radius) {}
  double area() const override { return 3 * radius.constant() * radius.constant(); }
  laconic::StepValue radius;
};

/// Evaluates step functions as radius = epoch + step / 10.
struct LinearCallbacks : laconic::RunCallbacks {
  bool has(const std::string&) const override { return false; }
  double learning_rate(std::int64_t, std::int64_t) override { return 0; }
  bool on_epoch_end(std::int64_t, const std::map<std::string, double>&) override { return false; }
  double step_function(const std::string& id, std::int64_t epoch, std::int64_t step) override {
    calls.push_back(id);
    return id == "nan" ? std::nan("") : static_cast<double>(epoch) + static_cast<double>(step) / 10;
  }
  std::vector<std::string> calls;
};

struct Square : Shape {
  explicit Square(SquareOptions o) : side(o.side) {}
  double area() const override { return side * side; }
  double side;
};

laconic::Registry<Shape> shapes() {
  laconic::Registry<Shape> r("shape");
  r.add<Square, SquareOptions>("square", "a square");
  r.add<Circle, CircleOptions>("circle", "a circle whose radius may change per step");
  return r;
}

laconic::ComponentSpec spec(const std::string& name, std::map<std::string, laconic::Value> fields = {}) {
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
  REQUIRE_THROWS_AS(r.create(spec("hexagon")), laconic::ConfigError);
  REQUIRE_THROWS_WITH(r.create(spec("hexagon")), "unknown shape 'hexagon'; known: circle, square");
}

TEST_CASE("unknown fields, wrong types and bad values name the field and the value", "[core][registry]") {
  auto r = shapes();
  REQUIRE_THROWS_WITH(r.resolve(spec("square", {{"sides", 2.0}})),
                      "unknown field 'sides' in shape 'square'; known: side");
  REQUIRE_THROWS_WITH(r.resolve(spec("square", {{"side", std::string("big")}})),
                      "square.side must be a number, got string \"big\"");
  REQUIRE_THROWS_WITH(r.resolve(spec("square", {{"side", -2.0}})), "square.side must be > 0, got -2");
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
  laconic::ComponentSpec left{"shape", "square", {{"side", 2.0}}};
  static laconic::OptionFields<PairOptions> fields() {
    return laconic::OptionFields<PairOptions>().component("left", &PairOptions::left, "a shape");
  }
};

struct Pair : Shape {
  explicit Pair(PairOptions o) : left(shapes().create(o.left)) {}
  double area() const override { return 2 * left->area(); }
  std::unique_ptr<Shape> left;
};

}  // namespace

TEST_CASE("nested components are resolved by the owner's registry and survive JSON", "[core][registry]") {
  laconic::Registry<Shape> r("shape");
  r.add<Square, SquareOptions>("square", "a square");
  r.add<Circle, CircleOptions>("circle", "a circle whose radius may change per step");
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

  CHECK_THROWS_WITH(r.resolve(spec("pair", {{"left", laconic::nested({"", "square", {{"side", -1.0}}})}})),
                    "in pair.left: square.side must be > 0, got -1");
  CHECK_THROWS_WITH(r.resolve(spec("pair", {{"left", laconic::nested({"model", "lenet5", {}})}})),
                    "pair.left must be a shape, got model 'lenet5'");
  CHECK_THROWS_WITH(r.resolve(spec("pair", {{"left", 1.0}})), "pair.left must be a component, got number 1");
}

TEST_CASE("a per-step field takes a constant or a function; other fields refuse functions", "[core][registry][step]") {
  using namespace laconic;
  const auto r = shapes();
  CHECK(r.create(spec("circle", {{"radius", std::int64_t{2}}}))->area() == 12);
  const ComponentSpec resolved = r.resolve(spec("circle", {{"radius", StepFunction{"e.lua:3"}}}));
  CHECK(resolved.fields.at("radius") == Value{StepFunction{"e.lua:3"}});
  CHECK(format_value(resolved.fields.at("radius")) == "function@e.lua:3");
  // JSON: {"function": id}, back to the same value.
  CHECK(resolved.to_json()["radius"] == nlohmann::json{{"function", "e.lua:3"}});
  CHECK(ComponentSpec::from_json("shape", resolved.to_json()) == resolved);
  CHECK_THROWS_WITH(r.resolve(spec("square", {{"side", StepFunction{"e.lua:3"}}})),
                    "square.side must be a number, got a function; only fields documented as "
                    "\"or function(epoch, step)\" take one");

  const StepValue radius = StepValue::read(resolved, "radius");
  CHECK(radius.varies());
  LinearCallbacks callbacks;
  CHECK(radius.at({2, 15, &callbacks}) == Approx(3.5));
  CHECK(callbacks.calls == std::vector<std::string>{"e.lua:3"});
  CHECK_THROWS_WITH(radius.at({0, 0, nullptr}),
                    Catch::Contains("circle.radius is the experiment file's function e.lua:3"));
  const StepValue nan = StepValue::read(r.resolve(spec("circle", {{"radius", StepFunction{"nan"}}})), "radius");
  CHECK_THROWS_WITH(nan.at({1, 4, &callbacks}),
                    "circle.radius = function at nan returned nan for epoch 1, step 4; it must "
                    "return a finite number");
  const StepValue constant = StepValue::read(r.resolve(spec("circle")), "radius");
  CHECK_FALSE(constant.varies());
  CHECK(constant.at({5, 5, nullptr}) == 1);
}

namespace {

struct PolygonOptions {
  std::vector<std::int64_t> sides = {3, 4, 5};
  static laconic::OptionFields<PolygonOptions> fields() {
    return laconic::OptionFields<PolygonOptions>()
        .integers("sides", &PolygonOptions::sides, "edge lengths")
        .rule([](const laconic::ComponentSpec& spec, PolygonOptions& o) {
          if (o.sides.size() < 3)
            throw laconic::ConfigError(
                laconic::str_cat(spec.name, ".sides needs at least 3 entries, got ", o.sides.size()));
        });
  }
};

struct Polygon : Shape {
  explicit Polygon(PolygonOptions o) : sides(std::move(o.sides)) {}
  double area() const override { return static_cast<double>(sides.size()); }
  std::vector<std::int64_t> sides;
};

}  // namespace

TEST_CASE("a list-of-ints field resolves, formats as Lua, survives JSON and refuses other types",
          "[core][registry][list]") {
  laconic::Registry<Shape> r("shape");
  r.add<Polygon, PolygonOptions>("polygon", "a polygon");
  using List = std::vector<std::int64_t>;

  const auto defaults = r.resolve(spec("polygon"));
  CHECK(defaults.integers("sides") == List{3, 4, 5});
  CHECK(laconic::format_value(defaults.fields.at("sides")) == "{3, 4, 5}");
  CHECK(laconic::format_value(laconic::Value{List{}}) == "{}");
  CHECK(laconic::field_type_name(laconic::FieldType::IntList) == std::string("list of ints"));
  CHECK(laconic::value_type_name(laconic::Value{List{1}}) == std::string("list of ints"));

  const auto given = r.resolve(spec("polygon", {{"sides", List{784, 392, 50, 10}}}));
  CHECK(r.create(given)->area() == 4.0);
  const auto json = given.to_json();
  CHECK(json.dump() == R"({"name":"polygon","sides":[784,392,50,10]})");
  CHECK(r.resolve(laconic::ComponentSpec::from_json("shape", json)) == given);
  CHECK(laconic::value_from_json(nlohmann::json::array()) == laconic::Value{List{}});
  // A list with a non-integer is a list of numbers (FieldType::NumberList), which this field refuses.
  CHECK(laconic::value_from_json(nlohmann::json::parse("[1, 2.5]")) == laconic::Value{std::vector<double>{1, 2.5}});
  CHECK_THROWS_WITH(laconic::value_from_json(nlohmann::json::parse("[1, \"x\"]")),
                    "a list field value in JSON must hold numbers only, got [1,\"x\"]");
  CHECK_THROWS_WITH(r.resolve(spec("polygon", {{"sides", std::vector<double>{1.5}}})),
                    "polygon.sides must be a list of ints, got list of numbers {1.5}");

  CHECK_THROWS_WITH(r.resolve(spec("polygon", {{"sides", std::int64_t{3}}})),
                    "polygon.sides must be a list of ints, got int 3");
  CHECK_THROWS_WITH(r.resolve(spec("polygon", {{"sides", List{1, 2}}})),
                    "polygon.sides needs at least 3 entries, got 2");
  CHECK_THROWS_WITH(spec("polygon", {{"sides", 1.5}}).integers("sides"),
                    "polygon.sides must be a list of ints, got 1.5");
}
