// A hardware profile (engine/core/hardware_profile.hpp) as docs/hardware.md writes it: durations as
// seconds or texts, a model found by its name, batch size and parameter count, the moment a number
// of gradient elements is ready, and every malformed field named with the file.
#include <catch2/catch.hpp>

#include <string>

#include "engine/core/error.hpp"
#include "engine/core/hardware_profile.hpp"

using namespace laconic;
using nlohmann::json;

namespace {

json example() {
  return json::parse(R"({
    "laconic_hardware_profile": 1, "name": "Example GPU", "device": "cuda",
    "models": [
      {"model": "lenet5", "batch_size": 64, "parameters": 61706, "forward": "0.2ms", "backward": 0.0004,
       "optimizer": "50us",
       "gradient_ready": [{"after": "0.1ms", "elements": 850}, {"after": "0.3ms", "elements": 60856}]},
      {"model": "lenet5", "batch_size": 128, "parameters": 61706, "forward": 0.0003, "backward": 0.0006}
    ],
    "compressors": {"topk": {"compress": {"per_call": "20us", "per_element": 1e-10},
                             "decompress": {"per_element": "0.05ns"}}}
  })");
}

std::string error_of(const json& document) {
  try {
    hardware_profile_from_json(document, "p.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a hardware profile reads durations as seconds or texts", "[core][hardware]") {
  const HardwareProfile p = hardware_profile_from_json(example(), "p.json");
  CHECK(p.name == "Example GPU");
  CHECK(p.device == "cuda");
  REQUIRE(p.models.size() == 2);
  const ModelStepCost& m = p.models[0];
  CHECK(m.forward == Approx(2e-4));
  CHECK(m.backward == Approx(4e-4));
  CHECK(m.optimizer == Approx(5e-5));
  CHECK(m.compute() == Approx(6.5e-4));
  CHECK(p.models[1].optimizer == 0);  // absent: no optimizer cost
  const CompressorCost* topk = p.compressor("topk");
  REQUIRE(topk != nullptr);
  CHECK(topk->compress.per_call == Approx(2e-5));
  CHECK(topk->decompress.per_call == 0);
  CHECK(topk->decompress.per_element == Approx(5e-11));
  // 2 calls of 1000 elements: 2 x (20 us + 1000 x 0.1 ns)
  CHECK(topk->compress.seconds(1000, 2) == Approx(2 * (2e-5 + 1e-7)));
  CHECK(p.compressor("qsgd") == nullptr);
}

TEST_CASE("a profile's model is found by name, batch size and parameter count", "[core][hardware]") {
  const HardwareProfile p = hardware_profile_from_json(example(), "p.json");
  CHECK(p.model("lenet5", 64, 61706) == &p.models[0]);
  CHECK(p.model("lenet5", 128, 61706) == &p.models[1]);
  CHECK(p.model("lenet5", 32, 61706) == nullptr);
  CHECK(p.model("lenet5", 64, 61707) == nullptr);  // another variant of the model
  CHECK(p.model("mlp", 64, 61706) == nullptr);
  CHECK(p.models_text() == "lenet5 (batch 64, 61706 parameters), lenet5 (batch 128, 61706 parameters)");
}

TEST_CASE("the first bucket is ready when backward has produced that many gradient elements", "[core][hardware]") {
  const HardwareProfile p = hardware_profile_from_json(example(), "p.json");
  const ModelStepCost& m = p.models[0];
  CHECK(m.ready_after(500) == Approx(1e-4));
  CHECK(m.ready_after(850) == Approx(1e-4));
  CHECK(m.ready_after(851) == Approx(3e-4));
  CHECK(m.ready_after(1 << 20) == Approx(4e-4));       // more than the model has: backward's end
  CHECK(p.models[1].ready_after(10) == Approx(6e-4));  // no ready times: backward's end
}

TEST_CASE("a malformed profile is refused with the file and the field", "[core][hardware]") {
  json j = example();
  j["laconic_hardware_profile"] = 2;
  CHECK_THAT(error_of(j), Catch::Contains("p.json: laconic_hardware_profile is 2; this laconic reads version 1"));
  j = example();
  j.erase("name");
  CHECK_THAT(error_of(j), Catch::Contains("hardware profile p.json: name is missing"));
  j = example();
  j["models"][0]["forward"] = -1;
  CHECK_THAT(error_of(j), Catch::Contains("models[0].forward must be >= 0"));
  j = example();
  j["models"][1].erase("backward");
  CHECK_THAT(error_of(j), Catch::Contains("models[1].backward is missing"));
  j = example();
  j["models"][0]["batch_size"] = "64";
  CHECK_THAT(error_of(j), Catch::Contains("models[0].batch_size must be an integer >= 0"));
  j = example();
  j["compressors"]["topk"]["compress"]["per_element"] = true;
  CHECK_THAT(error_of(j), Catch::Contains("compressors.topk.compress.per_element must be seconds"));
  j = example();
  j["models"][0]["forward"] = "fast";
  CHECK_THAT(error_of(j), Catch::Contains("models[0].forward"));
  CHECK_THROWS_AS(read_hardware_profile("/nonexistent/profile.json"), ConfigError);
}

TEST_CASE("the profile docs/hardware.md ships, measured on an H100, reads and covers the quickstart's model",
          "[core][hardware]") {
  const HardwareProfile p = read_hardware_profile(std::string(LACONIC_SOURCE_DIR) + "/docs/examples/h100.json");
  CHECK(p.device == "cuda");
  CHECK(p.name.find("H100") != std::string::npos);
  CHECK(p.model("lenet5", 64, 61706) != nullptr);
  CHECK(p.model("mlp", 64, 327880) != nullptr);
  CHECK(p.model("resnet", 64, 269722) != nullptr);
  for (const char* compressor : {"topk", "fp16", "bf16", "terngrad", "block_randomk"}) {
    INFO(compressor);
    REQUIRE(p.compressor(compressor) != nullptr);
    CHECK(p.compressor(compressor)->compress.per_element > 0);
  }
}

TEST_CASE("a step's costs written in the experiment apply to every run's model, with a costs file's compressors",
          "[core][hardware]") {
  const std::string dir = std::string(LACONIC_SOURCE_DIR) + "/docs/examples";
  const json fields = {{"label", "A100, by hand"}, {"forward", "3.1ms"}, {"backward", 0.006}, {"optimizer", "0.4ms"}};
  const HardwareProfile p = hardware_profile_by_hand(fields, dir + "/h100.json");  // its "compressors" object
  CHECK(p.name == "A100, by hand");
  REQUIRE(p.model("lenet5", 64, 61706) != nullptr);
  CHECK(p.model("resnet", 128, 11173962) == p.model("lenet5", 64, 61706));
  CHECK(p.model("mlp", 32, 1)->compute() == Approx(0.0031 + 0.006 + 0.0004));
  CHECK(p.models_text() == "every run's model");
  CHECK(p.compressor("topk") != nullptr);
  CHECK(hardware_profile_by_hand(fields, "").compressors.empty());

  auto error_of_fields = [](const json& f, const std::string& file) {
    try {
      hardware_profile_by_hand(f, file);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error_of_fields({{"label", "x"}, {"backward", "1ms"}}, ""),
             Catch::Contains("hardware profile by_hand { ... }: forward is missing"));
  CHECK_THAT(error_of_fields({{"label", "x"}, {"forward", "-1ms"}, {"backward", "1ms"}}, ""),
             Catch::Contains("by_hand { ... }: forward must be a duration"));
  CHECK_THAT(error_of_fields(fields, "/nonexistent/costs.json"),
             Catch::Contains("cannot read compressor costs '/nonexistent/costs.json'"));
}
