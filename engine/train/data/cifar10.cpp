#include "engine/train/data/cifar10.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/core/error.hpp"
#include "engine/train/data/split_cache.hpp"

namespace laconic::train {
namespace {

constexpr std::int64_t kPixels = 3 * 32 * 32;
constexpr std::int64_t kRecord = 1 + kPixels;
constexpr float kCifarMean[3] = {0.4914f, 0.4822f, 0.4465f};
constexpr float kCifarStd[3] = {0.2470f, 0.2435f, 0.2616f};

std::string path_of(const std::string& root, const std::string& file) {
  const std::string path = root + "/" + file;
  if (!std::filesystem::exists(path))
    throw ConfigError(str_cat("CIFAR-10 file '", file, "' not found in '", root,
                              "': no Debian package ships CIFAR-10; download the \"CIFAR-10 binary version\" "
                              "(cifar-10-binary.tar.gz) from Alex Krizhevsky's CIFAR page (www.cs.toronto.edu/~kriz/"
                              "cifar.html), unpack it and point cifar10 { root = ... } at its cifar-10-batches-bin "
                              "directory"));
  return path;
}

}  // namespace

OptionFields<Cifar10Options> Cifar10Options::fields() {
  return OptionFields<Cifar10Options>()
      .text("root", &Cifar10Options::root, "directory holding data_batch_1..5.bin and test_batch.bin")
      .rule([](const ComponentSpec& spec, Cifar10Options& o) {
        if (o.root.empty()) throw ConfigError(str_cat(spec.name, ".root must not be empty"));
      });
}

Cifar10Dataset::Cifar10Dataset(Cifar10Options options) : options_(std::move(options)) {
  for (const std::string& file : file_names()) path_of(options_.root, file);
}

std::vector<std::string> Cifar10Dataset::file_names() {
  return {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
          "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};
}

DataSplit Cifar10Dataset::load(const std::vector<std::string>& files) const {
  std::string key = "cifar10";
  for (const std::string& file : files) key += "\n" + file_key(path_of(options_.root, file));
  return cached_split(key, [&] { return read(files); });
}

DataSplit Cifar10Dataset::read(const std::vector<std::string>& files) const {
  std::vector<char> bytes;
  for (const std::string& file : files) {
    const std::string path = path_of(options_.root, file);
    std::ifstream in(path, std::ios::binary);
    std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) throw ConfigError(str_cat("cannot read '", path, "'"));
    if (data.empty() || data.size() % kRecord != 0)
      throw ConfigError(str_cat("'", path, "' is not a CIFAR-10 batch: expected a multiple of ", kRecord,
                                " bytes (1 label + 3072 pixels per image), got ", data.size()));
    bytes.insert(bytes.end(), data.begin(), data.end());
  }
  const std::int64_t n = static_cast<std::int64_t>(bytes.size()) / kRecord;
  auto records = torch::from_blob(bytes.data(), {n, kRecord}, torch::kUInt8);
  auto labels = records.select(1, 0).to(torch::kInt64);
  const std::int64_t largest = labels.max().item<std::int64_t>();
  if (largest > 9)
    throw ConfigError(str_cat("CIFAR-10 in '", options_.root, "': label ", largest, " is not a class 0..9"));
  auto inputs = records.narrow(1, 1, kPixels).reshape({n, 3, 32, 32}).to(torch::kFloat32);
  inputs.div_(255.0f);
  for (int c = 0; c < 3; ++c) inputs.select(1, c).sub_(kCifarMean[c]).div_(kCifarStd[c]);
  return DataSplit{inputs.contiguous(), labels.contiguous()};
}

const DataSplit& Cifar10Dataset::train() {
  if (!train_) {
    auto files = file_names();
    files.pop_back();
    train_ = load(files);
  }
  return *train_;
}

const DataSplit& Cifar10Dataset::test() {
  if (!test_) test_ = load({"test_batch.bin"});
  return *test_;
}

}  // namespace laconic::train
