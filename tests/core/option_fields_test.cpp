// OptionFields: one declaration per field gives the field table, the reading of a spec and the
// range messages; defaults are the members' initializers.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "engine/core/error.hpp"
#include "engine/core/option_fields.hpp"

namespace {

using namespace laconic;

enum class Mode { Fast, Careful };

struct GadgetOptions {
  std::int64_t count = 3;
  double rate = 0.5;
  double gain = 2;
  bool loud = false;
  std::string flavour = "plain";
  Mode mode = Mode::Careful;
  double low = 0.1;
  double high = 0.9;
  std::vector<std::int64_t> shape = {2, 2};
  std::string file = "x.pt";
  StepValue period = 4;

  static OptionFields<GadgetOptions> fields() {
    using O = GadgetOptions;
    return OptionFields<O>()
        .integer("count", &O::count, "how many", closed(1, 10))
        .number("rate", &O::rate, "a share", open_closed(0, 1))
        .number("gain", &O::gain, "", finite_above(0))
        .flag("loud", &O::loud, "makes noise")
        .text("flavour", &O::flavour, "taste", {"plain", "salty"})
        .choice("mode", &O::mode, "how", {{Mode::Fast, "fast"}, {Mode::Careful, "careful"}})
        .number_pair("band", &O::low, &O::high, "two edges", closed(0, 1))
        .integers("shape", &O::shape, "a shape")
        .text("file", &O::file, "a model")
        .relative_to_file(true)
        .step_integer("period", &O::period, "steps", at_least(1))
        .rule([](const ComponentSpec& spec, O& o) {
          if (o.low > o.high) throw ConfigError(str_cat(spec.name, ".band must rise, got ", o.low, " > ", o.high));
        });
  }
};

// The spec resolve() would give: every field at its default, then `changes`.
ComponentSpec spec_with(std::map<std::string, Value> changes) {
  ComponentSpec spec{"thing", "gadget", {}};
  for (const FieldSpec& f : GadgetOptions::fields().specs()) spec.fields[f.name] = f.default_value;
  for (auto& [k, v] : changes) spec.fields[k] = v;
  return spec;
}

std::string message_of(std::map<std::string, Value> changes) {
  try {
    (void)GadgetOptions::fields().read(spec_with(std::move(changes)));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("bounds are written as messages and docs write them", "[core][option_fields]") {
  CHECK(at_least(0).text() == ">= 0");
  CHECK(above(0).text() == "> 0");
  CHECK(closed(1, 65535).text() == "in [1, 65535]");
  CHECK(closed_open(0, 1).text() == "in [0, 1)");
  CHECK(open_closed(0, 0.5).text() == "in (0, 0.5]");
  CHECK(finite_above(0).text() == "in (0, inf)");
  CHECK(finite_at_least(0).text() == "in [0, inf)");
  CHECK_FALSE(Bounds{}.bounded());

  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  CHECK(open_closed(0, 1).contains(1));
  CHECK_FALSE(open_closed(0, 1).contains(0));
  CHECK(closed_open(0, 1).contains(0));
  CHECK_FALSE(closed_open(0, 1).contains(1));
  CHECK(at_least(0).contains(inf));
  CHECK_FALSE(finite_at_least(0).contains(inf));
  CHECK_FALSE(finite_above(0).contains(0));
  for (const Bounds& b : {Bounds{}, at_least(0), closed(0, 1), finite_above(0)}) CHECK_FALSE(b.contains(nan));
}

TEST_CASE("the field table comes from the declaration: defaults from the initializers, ranges in the docs",
          "[core][option_fields]") {
  const std::vector<FieldSpec> specs = GadgetOptions::fields();
  REQUIRE(specs.size() == 10);
  const auto at = [&](const std::string& name) {
    for (const FieldSpec& f : specs)
      if (f.name == name) return f;
    FAIL("no field " << name);
    return FieldSpec{};
  };
  CHECK(at("count").type == FieldType::Int);
  CHECK(at("count").default_value == Value{std::int64_t{3}});
  CHECK(at("count").doc == "how many, in [1, 10]");
  CHECK(at("rate").default_value == Value{0.5});
  CHECK(at("gain").doc == "in (0, inf)");
  CHECK(at("loud").default_value == Value{false});
  CHECK(at("flavour").doc == "taste, one of \"plain\", \"salty\"");
  CHECK(at("mode").type == FieldType::String);
  CHECK(at("mode").default_value == Value{std::string("careful")});
  CHECK(at("mode").doc == "how, one of \"fast\", \"careful\"");
  CHECK(at("band").type == FieldType::NumberList);
  CHECK(at("band").default_value == Value{std::vector<double>{0.1, 0.9}});
  CHECK(at("band").doc == "two edges, each in [0, 1]");
  CHECK(at("shape").default_value == Value{std::vector<std::int64_t>{2, 2}});
  CHECK(at("file").relative_to_file);
  CHECK(at("file").hashed);
  CHECK_FALSE(at("shape").relative_to_file);
  CHECK(at("period").type == FieldType::Int);
  CHECK(at("period").per_step);
  CHECK(at("period").default_value == Value{std::int64_t{4}});
}

TEST_CASE("reading a spec fills every member and names the component in range messages", "[core][option_fields]") {
  const GadgetOptions o = GadgetOptions::fields().read(spec_with({{"count", std::int64_t{7}},
                                                                  {"loud", true},
                                                                  {"mode", std::string("fast")},
                                                                  {"band", std::vector<double>{0.2, 0.3}},
                                                                  {"period", StepFunction{"e.lua:9"}}}));
  CHECK(o.count == 7);
  CHECK(o.rate == 0.5);
  CHECK(o.loud);
  CHECK(o.mode == Mode::Fast);
  CHECK(o.low == 0.2);
  CHECK(o.high == 0.3);
  CHECK(o.period.varies());

  CHECK(message_of({{"count", std::int64_t{0}}}) == "gadget.count must be in [1, 10], got 0");
  CHECK(message_of({{"count", std::int64_t{11}}}) == "gadget.count must be in [1, 10], got 11");
  CHECK(message_of({{"rate", 0.0}}) == "gadget.rate must be in (0, 1], got 0");
  CHECK(message_of({{"gain", std::numeric_limits<double>::infinity()}}) == "gadget.gain must be in (0, inf), got inf");
  CHECK(message_of({{"flavour", std::string("sweet")}}) ==
        "gadget.flavour must be one of \"plain\", \"salty\", got \"sweet\"");
  CHECK(message_of({{"mode", std::string("slow")}}) ==
        "gadget.mode must be one of \"fast\", \"careful\", got \"slow\"");
  CHECK(message_of({{"band", std::vector<double>{0.5}}}) == "gadget.band must be two numbers in [0, 1], got {0.5}");
  CHECK(message_of({{"band", std::vector<double>{0.5, 2.0}}}) ==
        "gadget.band must be two numbers in [0, 1], got {0.5, 2}");
  CHECK(message_of({{"period", std::int64_t{0}}}) == "gadget.period must be >= 1, got 0");
  // The rule runs after the fields, with the component's name.
  CHECK(message_of({{"band", std::vector<double>{0.8, 0.2}}}) == "gadget.band must rise, got 0.8 > 0.2");
  CHECK(message_of({{"count", std::string("many")}}) == "gadget.count must be an int, got \"many\"");
}

TEST_CASE("a field declared twice is refused", "[core][option_fields]") {
  struct Twice {
    bool a = false;
  };
  CHECK_THROWS_AS(OptionFields<Twice>().flag("a", &Twice::a, "").flag("a", &Twice::a, ""), InvariantError);
}
