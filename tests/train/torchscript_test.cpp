// torchscript { file = ... }: a model written in PyTorch and exported with
// scripts/export-torchscript.py (Debian's /usr/bin/python3 with python3-torch) is a Model like a
// built-in one: LeNet-5 written in Python, given the built-in lenet5's weights, computes the same
// logits and gradients; its parameters (and their shapes, for layer-wise compressors) come in
// the built-in's order; batch norm's statistics are buffers and train()/eval() reach the module;
// what cannot be trained is refused with the reason.
#include <cstdlib>
#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/models/objective.hpp"
#include "engine/train/data/synthetic.hpp"
#include "engine/train/models/torchscript.hpp"
#include "temp_dir.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

// Exports CLASS of examples/lenet5.py to DIR/NAME.pt; the path.
std::string export_model(const std::string& dir, const std::string& cls, const std::string& name) {
  const std::string out = dir + "/" + name + ".pt";
  const std::string command = std::string("/usr/bin/python3 '") + LACONIC_SOURCE_DIR +
                              "/scripts/export-torchscript.py' '" + LACONIC_SOURCE_DIR + "/examples/lenet5.py:" + cls +
                              "' --input 1,28,28 --out '" + out + "' > '" + dir + "/export.log' 2>&1";
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
  return out;
}

std::unique_ptr<train::Model> build(const std::string& name, std::map<std::string, Value> fields = {}) {
  return train::builtin_models().create({"model", name, std::move(fields)});
}

// Copies `from`'s parameters into `to` (same names, dots for the script's slashes).
void copy_weights(train::Model& from, train::Model& to) {
  torch::NoGradGuard no_grad;
  auto theirs = to.named_parameters();
  for (const auto& p : from.named_parameters()) {
    std::string key = p.key();
    std::replace(key.begin(), key.end(), '.', '/');
    REQUIRE(theirs.contains(key));
    theirs[key].copy_(p.value());
  }
}

}  // namespace

TEST_CASE("LeNet-5 written in PyTorch, with the built-in's weights, computes what the built-in computes",
          "[train][torchscript]") {
  testing::TempDir dir;
  const auto file = export_model(dir.path, "LeNet5", "lenet5");
  auto scripted = build("torchscript", {{"file", file}, {"input", std::vector<std::int64_t>{1, 28, 28}}});
  torch::manual_seed(7);
  auto builtin = build("lenet5");
  // The same tensors in the same order and shapes: what layer-wise compressors see.
  const auto ours = scripted->parameters(), theirs = builtin->parameters();
  REQUIRE(ours.size() == theirs.size());
  std::int64_t count = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    CHECK(ours[i].sizes() == theirs[i].sizes());
    count += ours[i].numel();
  }
  CHECK(count == 61706);
  copy_weights(*builtin, *scripted);
  const auto inputs = torch::randn({8, 1, 28, 28});
  const auto labels = torch::randint(0, 10, {8}, torch::kInt64);
  const auto a = scripted->forward(inputs), b = builtin->forward(inputs);
  CHECK(torch::allclose(a, b, 1e-5, 1e-6));
  train::training_loss(a, labels).backward();
  train::training_loss(b, labels).backward();
  for (std::size_t i = 0; i < ours.size(); ++i) CHECK(torch::allclose(ours[i].grad(), theirs[i].grad(), 1e-4, 1e-6));
  // The model checks that one example of the dataset gives its 10 logits.
  CHECK_NOTHROW(scripted->check_input({1, 28, 28}));
}

TEST_CASE("a scripted model's batch-norm statistics are buffers and train()/eval() reach it", "[train][torchscript]") {
  testing::TempDir dir;
  const auto file = export_model(dir.path, "SmallBatchNormNet", "bn");
  auto model = build("torchscript", {{"file", file}});
  CHECK(model->buffers().size() == 6);  // running mean, variance and batch count of 2 batch norms
  torch::manual_seed(3);
  const auto inputs = torch::randn({4, 1, 28, 28});
  model->train();
  const auto before = model->buffers()[0].clone();
  const auto first = model->forward(inputs), second = model->forward(inputs);
  CHECK_FALSE(torch::equal(first, second));                // dropout draws anew in training
  CHECK_FALSE(torch::equal(before, model->buffers()[0]));  // the running mean moved
  model->eval();
  CHECK(torch::equal(model->forward(inputs), model->forward(inputs)));
  CHECK_FALSE(model->is_training());
}

TEST_CASE("what a scripted model cannot do is refused with the file and the reason", "[train][torchscript]") {
  testing::TempDir dir;
  const auto file = export_model(dir.path, "LeNet5", "lenet5");
  CHECK_THROWS_WITH(build("torchscript", {{"file", dir.write("junk.pt", "not a model")}}),
                    Catch::Contains("junk.pt' cannot be loaded as a TorchScript module"));
  CHECK_THROWS_WITH(build("torchscript", {{"file", dir.path + "/missing.pt"}}),
                    Catch::Contains("missing.pt' cannot be loaded"));
  CHECK_THROWS_WITH(build("torchscript"), Catch::Contains("torchscript.file is required"));
  // Its outputs against the dataset's classes, and one example through it.
  auto twelve = build("torchscript", {{"file", file}, {"classes", std::int64_t{12}}});
  CHECK_THROWS_WITH(twelve->check_input({1, 28, 28}),
                    Catch::Contains("turns one example [1, 1, 28, 28] into [1, 10], expected logits [1, 12]"));
  auto lenet = build("torchscript", {{"file", file}});
  CHECK_THROWS_WITH(lenet->check_input({3, 32, 32}), Catch::Contains("forward of one example [1, 3, 32, 32] failed"));
  auto declared = build("torchscript", {{"file", file}, {"input", std::vector<std::int64_t>{1, 28, 28}}});
  CHECK_THROWS_WITH(declared->check_input({1, 32, 32}),
                    Catch::Contains("torchscript.input = {1, 28, 28} but the dataset's examples are {1, 32, 32}"));
}
