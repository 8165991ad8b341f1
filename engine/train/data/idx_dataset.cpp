#include "engine/train/data/idx_dataset.hpp"

#include <filesystem>
#include <sstream>

#include "engine/train/data/decoded_cache.hpp"
#include "engine/train/data/idx_reader.hpp"
#include "engine/train/data/split_cache.hpp"

namespace laconic::train {
namespace {

std::string find(const std::string& root, const std::string& base, const IdxDatasetInfo& info) {
  return find_idx_file(root, base, info.title, info.hint(base));
}

}  // namespace

void IdxImageDataset::check_files(const std::string& root, const IdxDatasetInfo& info) {
  for (const char* base :
       {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    find(root, base, info);
}

DataSplit IdxImageDataset::load(const std::string& prefix) const {
  const std::string images = find(root_, prefix + "-images-idx3-ubyte", info_);
  const std::string labels = find(root_, prefix + "-labels-idx1-ubyte", info_);
  std::ostringstream name, key;
  name << "idx\n" << images << "\n" << labels << "\n" << std::hexfloat << info_.mean << "\n" << info_.deviation;
  key << "idx\n"
      << file_key(images) << "\n"
      << file_key(labels) << "\n"
      << std::hexfloat << info_.mean << "\n"
      << info_.deviation;
  auto decode = [&] { return read_idx_split(images, labels, info_.mean, info_.deviation, info_.title); };
  // Splits of a few megabytes decode in milliseconds: only larger ones are kept on disk.
  constexpr std::uintmax_t kWorthCaching = std::uintmax_t{1} << 20;
  std::error_code error;
  const bool worth_caching = std::filesystem::file_size(images, error) >= kWorthCaching && !error;
  return cached_split(key.str(), [&] {
    return worth_caching ? decoded_split({name.str(), key.str()}, decode) : decode();
  });
}

const DataSplit& IdxImageDataset::train() {
  if (!train_) train_ = load("train");
  return *train_;
}

const DataSplit& IdxImageDataset::test() {
  if (!test_) test_ = load("t10k");
  return *test_;
}

}  // namespace laconic::train
