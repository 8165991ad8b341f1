// scripts/laconic_models.py writes laconic's built-in models in PyTorch for
// scripts/profile-hardware.py and bench/ddp_side_by_side.py: each has exactly the parameter count
// of the built-in it stands for (a profile's entry is matched to runs by that count), so a change
// to either side that the other lacks fails here. Runs Debian's /usr/bin/python3 with python3-torch.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <nlohmann/json.hpp>

#include "engine/train/builtin.hpp"
#include "python.hpp"
#include "skip.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {


std::int64_t parameters_of(const std::string& name, std::map<std::string, Value> fields = {}) {
  auto model = train::builtin_models().create({"model", name, std::move(fields)});
  std::int64_t total = 0;
  for (const auto& p : model->parameters()) total += p.numel();
  return total;
}

}  // namespace

TEST_CASE("the PyTorch twins of the built-in models have the built-ins' parameter counts",
          "[train][python][needs-pytorch]") {
  if (!testing::python_has_torch())
    LACONIC_SKIP("/usr/bin/python3 cannot import torch (Debian's python3-torch); the twins were not counted");
  const std::string command =
      std::string("/usr/bin/python3 '") + LACONIC_SOURCE_DIR + "/scripts/profile-hardware.py' --print-parameters 2>&1";
  const std::string out = testing::output_of(command);
  INFO(command << "\n" << out);
  const nlohmann::json twins = nlohmann::json::parse(out);
  const std::map<std::string, std::pair<std::string, std::int64_t>> builtins = {
      {"lenet5", {"lenet5", parameters_of("lenet5")}},
      {"mlp", {"mlp", parameters_of("mlp")}},
      {"resnet20", {"resnet", parameters_of("resnet", {{"depth", std::int64_t{20}}})}},
      {"resnet18", {"resnet", parameters_of("resnet", {{"depth", std::int64_t{18}}})}},
      {"vgg11", {"vgg11", parameters_of("vgg11")}},
      {"gpt", {"gpt", parameters_of("gpt")}},
  };
  CHECK(twins.size() == builtins.size());
  for (const auto& [twin, expected] : builtins) {
    INFO(twin);
    REQUIRE(twins.contains(twin));
    CHECK(twins[twin]["model"] == expected.first);
    CHECK(twins[twin]["parameters"].get<std::int64_t>() == expected.second);
  }
}
