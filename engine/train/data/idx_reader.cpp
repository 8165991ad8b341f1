#include "engine/train/data/idx_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/train/data/populated_tensor.hpp"

namespace laconic::train {
namespace {

// An open idx file, gzipped or plain (gzread reads both), read straight into tensors: no
// intermediate buffer and no copy of the payload.
class IdxFile {
 public:
  explicit IdxFile(const std::string& path) : path_(path), file_(nullptr, gzclose) {
    if (!std::filesystem::exists(path)) throw ConfigError(str_cat("file not found: '", path, "'"));
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) throw ConfigError(str_cat("cannot open '", path, "'"));
    gzbuffer(file_.get(), 1 << 17);
  }

  /// Reads up to `size` bytes into `out`; returns how many there were.
  std::size_t read(std::uint8_t* out, std::size_t size) {
    std::size_t done = 0;
    while (done < size) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(size - done, 1u << 30));
      const int n = gzread(file_.get(), out + done, chunk);
      if (n < 0) throw ConfigError(str_cat("cannot read '", path_, "': corrupt gzip data"));
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  /// The big-endian 32-bit words of the header (the magic first); `have` says how many bytes
  /// there were when fewer than 4 * count.
  std::vector<std::uint32_t> header(std::size_t count, std::size_t& have) {
    std::vector<std::uint8_t> bytes(4 * count);
    have = read(bytes.data(), bytes.size());
    std::vector<std::uint32_t> words(count, 0);
    for (std::size_t i = 0; 4 * i + 3 < have; ++i)
      words[i] = (std::uint32_t{bytes[4 * i]} << 24) | (std::uint32_t{bytes[4 * i + 1]} << 16) |
                 (std::uint32_t{bytes[4 * i + 2]} << 8) | std::uint32_t{bytes[4 * i + 3]};
    return words;
  }

  /// Reads the `size` bytes after the header in chunks, passing each to `consume(bytes, offset,
  /// length)`, and checks the file ends there; else "expected N bytes for <what>, got M".
  template <class Consume>
  void read_payload(std::size_t size, std::size_t header_bytes, const std::string& what, Consume consume) {
    std::vector<std::uint8_t> chunk(1 << 16);
    std::size_t got = 0, n = 0;
    while (got < size && (n = read(chunk.data(), std::min(chunk.size(), size - got))) > 0) {
      consume(chunk.data(), got, n);
      got += n;
    }
    if (got == size)
      while ((n = read(chunk.data(), chunk.size())) > 0) got += n;
    if (got != size)
      throw ConfigError(
          str_cat("'", path_, "': expected ", header_bytes + size, " bytes for ", what, ", got ", header_bytes + got));
  }

 private:
  std::string path_;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file_;
};

// An image file's header: the number of images and their size.
struct ImageHeader {
  std::int64_t n = 0, rows = 0, cols = 0;
  std::string what() const { return str_cat(n, " images of ", rows, "x", cols); }
};

ImageHeader read_image_header(IdxFile& file, const std::string& path) {
  std::size_t have = 0;
  const auto header = file.header(4, have);
  if (have < 16 || header[0] != 0x00000803)
    throw ConfigError(str_cat("'", path, "' is not an idx3 image file (magic 0x00000803)"));
  return {header[1], header[2], header[3]};
}

}  // namespace

torch::Tensor read_idx_images(const std::string& path) {
  IdxFile file(path);
  const ImageHeader h = read_image_header(file, path);
  auto images = torch::empty({h.n, h.rows, h.cols}, torch::kUInt8);
  std::uint8_t* out = images.data_ptr<std::uint8_t>();
  file.read_payload(
      static_cast<std::size_t>(images.numel()), 16, h.what(),
      [out](const std::uint8_t* bytes, std::size_t at, std::size_t n) { std::memcpy(out + at, bytes, n); });
  return images;
}

torch::Tensor read_idx_labels(const std::string& path) {
  IdxFile file(path);
  std::size_t have = 0;
  const auto header = file.header(2, have);
  if (have < 8 || header[0] != 0x00000801)
    throw ConfigError(str_cat("'", path, "' is not an idx1 label file (magic 0x00000801)"));
  const std::int64_t n = header[1];
  auto labels = torch::empty({n}, torch::kInt64);
  std::int64_t* out = labels.data_ptr<std::int64_t>();
  file.read_payload(static_cast<std::size_t>(n), 8, str_cat(n, " labels"),
                    [out](const std::uint8_t* bytes, std::size_t at, std::size_t count) {
                      for (std::size_t i = 0; i < count; ++i) out[at + i] = bytes[i];
                    });
  return labels;
}

std::string find_idx_file(const std::string& root, const std::string& base, const std::string& dataset,
                          const std::string& hint) {
  // Debian ships the files gzipped; a user's own copy may be unpacked.
  for (const std::string& name : {base + ".gz", base})
    if (std::filesystem::exists(root + "/" + name)) return root + "/" + name;
  throw ConfigError(str_cat(dataset, " file '", base, "' not found in '", root, "': ", hint));
}

DataSplit read_idx_split(const std::string& images_path, const std::string& labels_path, float mean, float deviation,
                         const std::string& dataset) {
  auto labels = read_idx_labels(labels_path);
  IdxFile file(images_path);
  const ImageHeader h = read_image_header(file, images_path);
  if (h.n != labels.size(0))
    throw ConfigError(str_cat(dataset, ": ", h.n, " images in '", images_path, "' but ", labels.size(0), " labels in '",
                              labels_path, "'"));
  // A pixel has 256 values: each is converted once, as (x / 255 - mean) / deviation in float
  // (what the tensor expression computes, bit for bit), and the pixels are converted by table
  // lookup as they are decompressed, chunk by chunk, with no byte tensor of the whole file.
  float table[256];
  for (int x = 0; x < 256; ++x) table[x] = (static_cast<float>(x) / 255.0f - mean) / deviation;
  auto inputs = populated_empty({h.n, 1, h.rows, h.cols}, torch::kFloat32);
  float* out = inputs.data_ptr<float>();
  file.read_payload(static_cast<std::size_t>(inputs.numel()), 16, h.what(),
                    [&table, out](const std::uint8_t* bytes, std::size_t at, std::size_t n) {
                      for (std::size_t i = 0; i < n; ++i) out[at + i] = table[bytes[i]];
                    });
  return DataSplit{inputs, labels};
}

}  // namespace laconic::train
