// Decoded splits kept on disk: what is loaded equals what was stored, bit for bit; a new version
// replaces the old; a file of another key, a cut-short or foreign file is ignored; LACONIC_CACHE_DIR picks or turns off
// the folder; and Fashion-MNIST read through the cache equals Fashion-MNIST decoded from its files.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "engine/train/data/decoded_cache.hpp"
#include "engine/train/data/idx_reader.hpp"
#include "cache_dir_setting.hpp"
#include "temp_dir.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;
using laconic::testing::CacheDirSetting;
using laconic::testing::TempDir;

namespace {

train::DataSplit image_split() {
  torch::manual_seed(7);
  return {torch::randn({50, 1, 28, 28}), torch::randint(0, 10, {50}, torch::kInt64)};
}

std::vector<std::filesystem::path> files_in(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  if (std::filesystem::exists(dir))
    for (const auto& entry : std::filesystem::directory_iterator(dir)) out.push_back(entry.path());
  return out;
}

}  // namespace

TEST_CASE("a stored split loads back bit for bit, under its key only", "[train][data][cache]") {
  TempDir dir;
  const auto split = image_split();
  REQUIRE(train::store_decoded_split(dir.path, {"one", "key one"}, split));
  const auto loaded = train::load_decoded_split(dir.path, {"one", "key one"});
  REQUIRE(loaded);
  CHECK(loaded->inputs.sizes() == split.inputs.sizes());
  CHECK(loaded->inputs.scalar_type() == torch::kFloat32);
  CHECK(loaded->labels.scalar_type() == torch::kInt64);
  CHECK(torch::equal(loaded->inputs, split.inputs));
  CHECK(torch::equal(loaded->labels, split.labels));
  CHECK_FALSE(train::load_decoded_split(dir.path, {"one", "key two"}));  // its source files changed
  CHECK_FALSE(train::load_decoded_split(dir.path, {"two", "key one"}));  // another split
  // Only the renamed file is left, no temporary.
  CHECK(files_in(dir.path).size() == 1);
  // A new version of the split takes the old one's place.
  REQUIRE(train::store_decoded_split(dir.path, {"one", "key one, version 2"}, split));
  CHECK(files_in(dir.path).size() == 1);
  CHECK(train::load_decoded_split(dir.path, {"one", "key one, version 2"}));
  CHECK_FALSE(train::load_decoded_split(dir.path, {"one", "key one"}));
}

TEST_CASE("a split of byte tokens (uint8) is stored and loads back as bytes", "[train][data][cache]") {
  TempDir dir;
  const auto stream = torch::arange(0, 4097, torch::kInt64).remainder(256).to(torch::kUInt8);
  const train::DataSplit split{stream.narrow(0, 0, 4096).reshape({32, 128}).clone(),
                               stream.narrow(0, 1, 4096).reshape({32, 128}).clone()};
  REQUIRE(train::store_decoded_split(dir.path, {"bytes", "bytes key"}, split));
  const auto loaded = train::load_decoded_split(dir.path, {"bytes", "bytes key"});
  REQUIRE(loaded);
  CHECK(loaded->inputs.scalar_type() == torch::kUInt8);
  CHECK(loaded->labels.scalar_type() == torch::kUInt8);
  CHECK(torch::equal(loaded->inputs, split.inputs));
  CHECK(torch::equal(loaded->labels, split.labels));
}

TEST_CASE("a cut-short or foreign cache file is ignored", "[train][data][cache]") {
  TempDir dir;
  REQUIRE(train::store_decoded_split(dir.path, {"k", "k"}, image_split()));
  const auto files = files_in(dir.path);
  REQUIRE(files.size() == 1);
  const auto full = std::filesystem::file_size(files[0]);
  SECTION("cut short") {
    std::filesystem::resize_file(files[0], full - 100);
    CHECK_FALSE(train::load_decoded_split(dir.path, {"k", "k"}));
  }
  SECTION("another file under its name") {
    std::ofstream(files[0], std::ios::binary | std::ios::trunc) << "not a split";
    CHECK_FALSE(train::load_decoded_split(dir.path, {"k", "k"}));
  }
  SECTION("empty") {
    std::ofstream(files[0], std::ios::binary | std::ios::trunc);
    CHECK_FALSE(train::load_decoded_split(dir.path, {"k", "k"}));
  }
}

TEST_CASE("decoded_split decodes once, then maps the stored split; LACONIC_CACHE_DIR=off keeps nothing",
          "[train][data][cache]") {
  TempDir dir;
  int decoded = 0;
  auto decode = [&] {
    ++decoded;
    return image_split();
  };
  SECTION("a cache folder") {
    CacheDirSetting setting(dir.path + "/cache");
    const auto first = train::decoded_split({"k", "k"}, decode);
    const auto second = train::decoded_split({"k", "k"}, decode);
    CHECK(decoded == 1);
    CHECK(torch::equal(first.inputs, second.inputs));
    CHECK(torch::equal(first.labels, second.labels));
    CHECK(files_in(dir.path + "/cache").size() == 1);
  }
  SECTION("off") {
    CacheDirSetting setting("off");
    CHECK_FALSE(train::decoded_cache_dir());
    train::decoded_split({"k", "k"}, decode);
    train::decoded_split({"k", "k"}, decode);
    CHECK(decoded == 2);
    CHECK(files_in(dir.path).empty());
  }
}

TEST_CASE("Fashion-MNIST's test split through the cache equals the split decoded from its files",
          "[train][data][cache]") {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  const std::string images = train::find_idx_file(root, "t10k-images-idx3-ubyte", "fashion_mnist", "");
  const std::string labels = train::find_idx_file(root, "t10k-labels-idx1-ubyte", "fashion_mnist", "");
  auto decode = [&] { return train::read_idx_split(images, labels, 0.2860f, 0.3530f, "fashion_mnist"); };
  TempDir dir;
  CacheDirSetting setting(dir.path);
  train::decoded_split({"fashion test", "fashion test"}, decode);                             // decoded and stored
  const auto mapped = train::load_decoded_split(dir.path, {"fashion test", "fashion test"});  // from the file
  REQUIRE(mapped);
  const auto fresh = decode();
  CHECK(mapped->inputs.size(0) == 10000);
  CHECK(torch::equal(mapped->inputs, fresh.inputs));
  CHECK(torch::equal(mapped->labels, fresh.labels));
}
