#include "engine/train/idx_reader.hpp"

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

// gzread reads plain files too, so one path handles .gz and uncompressed copies.
std::vector<std::uint8_t> read_all(const std::string& path) {
  if (!std::filesystem::exists(path)) throw ConfigError(str_cat("file not found: '", path, "'"));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) throw ConfigError(str_cat("cannot open '", path, "'"));
  std::vector<std::uint8_t> data;
  std::uint8_t buffer[1 << 16];
  while (true) {
    int n = gzread(file.get(), buffer, sizeof buffer);
    if (n < 0) throw ConfigError(str_cat("cannot read '", path, "': corrupt gzip data"));
    if (n == 0) break;
    data.insert(data.end(), buffer, buffer + n);
  }
  return data;
}

std::uint32_t big_endian(const std::vector<std::uint8_t>& d, std::size_t at) {
  return (std::uint32_t{d[at]} << 24) | (std::uint32_t{d[at + 1]} << 16) |
         (std::uint32_t{d[at + 2]} << 8) | std::uint32_t{d[at + 3]};
}

}  // namespace

torch::Tensor read_idx_images(const std::string& path) {
  auto data = read_all(path);
  if (data.size() < 16 || big_endian(data, 0) != 0x00000803)
    throw ConfigError(str_cat("'", path, "' is not an idx3 image file (magic 0x00000803)"));
  const std::int64_t n = big_endian(data, 4), rows = big_endian(data, 8),
                     cols = big_endian(data, 12);
  const auto expected = static_cast<std::size_t>(16 + n * rows * cols);
  if (data.size() != expected)
    throw ConfigError(str_cat("'", path, "': expected ", expected, " bytes for ", n, " images of ",
                              rows, "x", cols, ", got ", data.size()));
  auto images = torch::empty({n, rows, cols}, torch::kUInt8);
  std::memcpy(images.data_ptr<std::uint8_t>(), data.data() + 16, expected - 16);
  return images;
}

torch::Tensor read_idx_labels(const std::string& path) {
  auto data = read_all(path);
  if (data.size() < 8 || big_endian(data, 0) != 0x00000801)
    throw ConfigError(str_cat("'", path, "' is not an idx1 label file (magic 0x00000801)"));
  const std::int64_t n = big_endian(data, 4);
  if (data.size() != static_cast<std::size_t>(8 + n))
    throw ConfigError(str_cat("'", path, "': expected ", 8 + n, " bytes for ", n,
                              " labels, got ", data.size()));
  auto labels = torch::empty({n}, torch::kUInt8);
  std::memcpy(labels.data_ptr<std::uint8_t>(), data.data() + 8, static_cast<std::size_t>(n));
  return labels.to(torch::kInt64);
}

std::string find_idx_file(const std::string& root, const std::string& base,
                          const std::string& dataset, const std::string& hint) {
  // Debian ships the files gzipped; a user's own copy may be unpacked.
  for (const std::string& name : {base + ".gz", base})
    if (std::filesystem::exists(root + "/" + name)) return root + "/" + name;
  throw ConfigError(str_cat(dataset, " file '", base, "' not found in '", root, "': ", hint));
}

DataSplit read_idx_split(const std::string& images_path, const std::string& labels_path,
                         float mean, float deviation, const std::string& dataset) {
  auto images = read_idx_images(images_path);
  auto labels = read_idx_labels(labels_path);
  if (images.size(0) != labels.size(0))
    throw ConfigError(str_cat(dataset, ": ", images.size(0), " images in '", images_path,
                              "' but ", labels.size(0), " labels in '", labels_path, "'"));
  auto inputs = images.to(torch::kFloat32).div_(255.0f).sub_(mean).div_(deviation).unsqueeze(1);
  return DataSplit{inputs.contiguous(), labels};
}

}  // namespace laconic::train
