#include <filesystem>
#include <fstream>

#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/data/fashion_mnist.hpp"
#include "engine/train/data/idx_reader.hpp"
#include "engine/train/data/split_cache.hpp"
#include "rank_threads.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

void write_be32(std::ofstream& out, std::uint32_t v) {
  const unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                              static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  out.write(reinterpret_cast<const char*>(b), 4);
}

}  // namespace

TEST_CASE("the idx reader reads a plain idx3 file and rejects a truncated one", "[train][idx]") {
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

TEST_CASE("an idx split holds every pixel value standardized as the tensor expression would", "[train][idx]") {
  auto dir = testing::make_temp_dir();
  {
    // 4 images of 8x8: every byte value once, and a label file with one byte too many.
    std::ofstream images(dir + "/img", std::ios::binary);
    for (std::uint32_t v : {0x803u, 4u, 8u, 8u}) write_be32(images, v);
    for (int i = 0; i < 256; ++i) images.put(static_cast<char>(255 - i));
    std::ofstream labels(dir + "/lbl", std::ios::binary);
    for (std::uint32_t v : {0x801u, 4u}) write_be32(labels, v);
    for (int i = 0; i < 4; ++i) labels.put(static_cast<char>(i));
    labels.put(9);
  }
  REQUIRE_THROWS_WITH(train::read_idx_labels(dir + "/lbl"), Catch::Contains("expected 12 bytes for 4 labels, got 13"));
  std::filesystem::resize_file(dir + "/lbl", 12);
  const float mean = 0.2860f, deviation = 0.3530f;
  const auto split = train::read_idx_split(dir + "/img", dir + "/lbl", mean, deviation, "test");
  const auto reference =
      train::read_idx_images(dir + "/img").to(torch::kFloat32).div_(255.0f).sub_(mean).div_(deviation).unsqueeze(1);
  REQUIRE(split.inputs.sizes() == torch::IntArrayRef({4, 1, 8, 8}));
  CHECK(torch::equal(split.inputs, reference));
  CHECK(split.labels.dtype() == torch::kInt64);
  CHECK(split.labels[3].item<std::int64_t>() == 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the split cache loads a key once, shares its tensors, and sees a replaced file", "[train][dataset]") {
  int loads = 0;
  auto load = [&loads] {
    ++loads;
    return train::DataSplit{torch::ones({2, 3}), torch::zeros({2}, torch::kInt64)};
  };
  const auto first = train::cached_split("split-cache-test", load);
  const auto second = train::cached_split("split-cache-test", load);
  CHECK(loads == 1);
  CHECK(first.inputs.data_ptr() == second.inputs.data_ptr());  // no copy: the same memory

  auto dir = testing::make_temp_dir();
  const std::string path = dir + "/data";
  { std::ofstream(path) << "abc"; }
  const std::string before = train::file_key(path);
  CHECK(before == train::file_key(path));
  { std::ofstream(path) << "abcd"; }
  CHECK(before != train::file_key(path));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a missing Fashion-MNIST names the Debian package", "[train][dataset]") {
  auto r = train::builtin_datasets();
  REQUIRE_THROWS_WITH(
      r.create({"dataset", "fashion_mnist", {{"root", std::string("/nonexistent/fmnist")}}}),
      Catch::Contains("install the Debian package dataset-fashion-mnist") && Catch::Contains("/nonexistent/fmnist"));
}

TEST_CASE("Fashion-MNIST has 60,000 / 10,000 images, 6,000 / 1,000 per class", "[train][dataset]") {
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
