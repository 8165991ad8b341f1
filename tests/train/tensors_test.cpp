// tensors { train = ..., test = ... }: splits written in Python by torch.save({"inputs": ...,
// "labels": ...}) (Debian's /usr/bin/python3 with python3-torch) are read as float32 examples and
// int64 labels (tokens for a language model), and what does not fit is refused naming the file.
#include <cstdlib>
#include <fstream>

#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "temp_dir.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

// Runs `python` (Python statements, `torch` imported, `d` the directory) under Debian's Python.
void python(const std::string& dir, const std::string& code) {
  const std::string script = dir + "/make.py";
  std::ofstream(script) << "import torch\nd = '" << dir << "'\n" << code << "\n";
  const std::string command = "/usr/bin/python3 '" + script + "' > '" + dir + "/make.log' 2>&1";
  INFO(code);
  REQUIRE(std::system(command.c_str()) == 0);
}

std::unique_ptr<train::Dataset> tensors(const std::string& train, const std::string& test, std::int64_t classes = 0) {
  return train::builtin_datasets().create(
      {"dataset", "tensors", {{"train", train}, {"test", test}, {"classes", classes}}});
}

}  // namespace

TEST_CASE("splits saved with torch.save are read as float32 examples and int64 labels", "[train][tensors]") {
  testing::TempDir dir;
  python(
      dir.path,
      "g = torch.Generator().manual_seed(0)\n"
      "torch.save({'inputs': torch.rand(20, 1, 6, 6, dtype=torch.float64, generator=g),"
      " 'labels': torch.arange(20, dtype=torch.int32) % 4}, d + '/train.pt')\n"
      "torch.save({'inputs': torch.rand(8, 1, 6, 6, generator=g), 'labels': torch.arange(8) % 3}, d + '/test.pt')\n"
      "torch.save({'inputs': torch.randint(0, 50, (10, 7)), 'labels': torch.randint(0, 50, (10, 7))}, d + '/lm.pt')\n"
      "torch.save([1, 2], d + '/list.pt')\n"
      "torch.save({'inputs': torch.rand(5, 3), 'targets': torch.arange(5)}, d + '/nolabels.pt')\n"
      "torch.save({'inputs': torch.rand(5, 3), 'labels': torch.arange(4)}, d + '/short.pt')\n"
      "torch.save({'inputs': torch.rand(8, 1, 5, 5), 'labels': torch.arange(8) % 3}, d + '/other.pt')");
  auto data = tensors(dir.path + "/train.pt", dir.path + "/test.pt");
  CHECK(data->classes() == 4);  // the largest training label + 1
  CHECK(data->example_shape() == std::vector<std::int64_t>{1, 6, 6});
  CHECK(data->sequence_length() == 0);
  const auto& train = data->train();
  CHECK(train.size() == 20);
  CHECK(train.inputs.scalar_type() == torch::kFloat32);
  CHECK(train.labels.scalar_type() == torch::kInt64);
  CHECK(train.labels[5].item<std::int64_t>() == 1);
  CHECK(data->test().size() == 8);

  auto lm = tensors(dir.path + "/lm.pt", dir.path + "/lm.pt", 50);
  CHECK(lm->sequence_length() == 7);
  CHECK(lm->train().inputs.scalar_type() == torch::kInt64);

  const std::string test = dir.path + "/test.pt";
  CHECK_THROWS_WITH(tensors(dir.path + "/missing.pt", test)->train(), Catch::Contains("tensors.train: cannot open"));
  CHECK_THROWS_WITH(tensors(dir.path + "/list.pt", test)->train(),
                    Catch::Contains("list.pt' holds a GenericList, expected a dict with \"inputs\" and \"labels\""));
  CHECK_THROWS_WITH(tensors(dir.path + "/nolabels.pt", test)->train(), Catch::Contains("has no tensor \"labels\""));
  CHECK_THROWS_WITH(tensors(dir.path + "/short.pt", test)->train(),
                    Catch::Contains("must hold the same number of examples"));
  CHECK_THROWS_WITH(
      tensors(dir.path + "/train.pt", dir.path + "/other.pt")->test(),
      Catch::Contains("holds examples [8, 1, 5, 5] Float, unlike the training split's [20, 1, 6, 6] Float"));
  CHECK_THROWS_WITH(tensors(dir.path + "/train.pt", test, 3)->train(), Catch::Contains("has label 3 but classes = 3"));
  CHECK_THROWS_WITH(train::builtin_datasets().create({"dataset", "tensors", {}}),
                    Catch::Contains("tensors needs train = \"FILE\" and test = \"FILE\""));
}
