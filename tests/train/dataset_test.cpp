#include <filesystem>
#include <fstream>

#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/fashion_mnist.hpp"
#include "engine/train/idx_reader.hpp"
#include "rank_threads.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

void write_be32(std::ofstream& out, std::uint32_t v) {
  const unsigned char b[4] = {static_cast<unsigned char>(v >> 24),
                              static_cast<unsigned char>(v >> 16),
                              static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  out.write(reinterpret_cast<const char*>(b), 4);
}

}  // namespace

TEST_CASE("the idx reader reads a plain idx3 file and rejects a truncated one",
          "[train][idx]") {
  auto dir = testing::make_temp_dir();
  {
    std::ofstream out(dir + "/img", std::ios::binary);
    write_be32(out, 0x803);
    write_be32(out, 2);
    write_be32(out, 2);
    write_be32(out, 3);
    for (int i = 0; i < 12; ++i) out.put(static_cast<char>(i * 10));
  }
  auto images = train::read_idx_images(dir + "/img");
  REQUIRE(images.sizes() == torch::IntArrayRef({2, 2, 3}));
  CHECK(images[1][1][2].item<int>() == 110);
  std::filesystem::resize_file(dir + "/img", 20);
  REQUIRE_THROWS_WITH(train::read_idx_images(dir + "/img"),
                      Catch::Contains("expected 28 bytes for 2 images of 2x3, got 20"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a missing Fashion-MNIST names the Debian package", "[train][dataset]") {
  auto r = train::builtin_datasets();
  REQUIRE_THROWS_WITH(
      r.create({"dataset", "fashion_mnist", {{"root", std::string("/nonexistent/fmnist")}}}),
      Catch::Contains("install the Debian package dataset-fashion-mnist") &&
          Catch::Contains("/nonexistent/fmnist"));
}

TEST_CASE("Fashion-MNIST has 60,000 / 10,000 images, 6,000 / 1,000 per class",
          "[train][dataset]") {
  train::FashionMnistDataset data(train::FashionMnistOptions{});
  const auto& train_split = data.train();
  const auto& test_split = data.test();
  REQUIRE(train_split.inputs.sizes() == torch::IntArrayRef({60000, 1, 28, 28}));
  REQUIRE(test_split.inputs.sizes() == torch::IntArrayRef({10000, 1, 28, 28}));
  auto train_counts = torch::bincount(train_split.labels);
  auto test_counts = torch::bincount(test_split.labels);
  for (int c = 0; c < 10; ++c) {
    CHECK(train_counts[c].item<std::int64_t>() == 6000);
    CHECK(test_counts[c].item<std::int64_t>() == 1000);
  }
  // Standardized with the training statistics: mean near 0, deviation near 1.
  CHECK(train_split.inputs.mean().item<double>() == Approx(0.0).margin(0.01));
  CHECK(train_split.inputs.std().item<double>() == Approx(1.0).margin(0.01));
}
