#include "engine/train/data/decoded_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "engine/core/hash.hpp"

namespace laconic::train {
namespace {

// A cache file: the magic, the key, then for inputs and labels their dtype, shape, offset and
// size in bytes; each tensor's bytes start on a page boundary. Host byte order: the file is this
// machine's cache, not an exchange format.
constexpr std::array<char, 16> kCacheMagic = {'l', 'a', 'c', 'o', 'n', 'i', 'c', '-',
                                         's', 'p', 'l', 'i', 't', ' ', 'v', '1'};
constexpr std::uint64_t kPage = 4096;
constexpr int kMaxDims = 8;

std::uint64_t round_up(std::uint64_t n) { return (n + kPage - 1) / kPage * kPage; }

// A tensor's entry in the header.
struct Entry {
  std::int64_t dtype = 0;
  std::vector<std::int64_t> shape;
  std::uint64_t offset = 0, bytes = 0;
};

// A read-only mapping of a whole file, unmapped when the last tensor made from it goes.
struct Mapping {
  void* address = MAP_FAILED;
  std::size_t size = 0;
  ~Mapping() {
    if (address != MAP_FAILED) ::munmap(address, size);
  }
};

std::shared_ptr<Mapping> map_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  auto mapping = std::make_shared<Mapping>();
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    mapping->size = static_cast<std::size_t>(st.st_size);
    // Read-only: populating a writable private mapping would copy every page.
    mapping->address = ::mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  }
  ::close(fd);
  return mapping->address == MAP_FAILED ? nullptr : mapping;
}

// Reads the header's fields in order, never past the end of the mapping.
class HeaderReader {
 public:
  HeaderReader(const char* data, std::size_t size) : data_(data), size_(size) {}

  template <class T>
  bool read(T& out) {
    if (size_ - at_ < sizeof(T)) return false;
    std::memcpy(&out, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }

  bool read_bytes(std::string& out, std::uint64_t n) {
    if (size_ - at_ < n) return false;
    out.assign(data_ + at_, n);
    at_ += n;
    return true;
  }

  bool read_entry(Entry& e) {
    std::int64_t dims = 0;
    if (!read(e.dtype) || !read(dims) || dims < 0 || dims > kMaxDims) return false;
    e.shape.resize(static_cast<std::size_t>(dims));
    for (auto& d : e.shape)
      if (!read(d) || d < 0) return false;
    return read(e.offset) && read(e.bytes);
  }

 private:
  const char* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

Entry entry_of(const torch::Tensor& t, std::uint64_t offset) {
  return {static_cast<std::int64_t>(t.scalar_type()), t.sizes().vec(), offset, t.nbytes()};
}

// The tensor an entry describes, over the mapping; nullopt when the entry does not fit the file.
std::optional<torch::Tensor> tensor_at(const std::shared_ptr<Mapping>& mapping, const Entry& e) {
  const auto type = static_cast<torch::ScalarType>(e.dtype);
  if (type != torch::kFloat32 && type != torch::kInt64 && type != torch::kUInt8) return std::nullopt;
  std::uint64_t count = 1;
  for (const std::int64_t d : e.shape) count *= static_cast<std::uint64_t>(d);
  if (count * c10::elementSize(type) != e.bytes || e.offset % kPage != 0 || e.offset > mapping->size ||
      mapping->size - e.offset < e.bytes)
    return std::nullopt;
  void* data = static_cast<char*>(mapping->address) + e.offset;
  return torch::from_blob(
      data, e.shape, [mapping](void*) {}, torch::TensorOptions(type));
}

}  // namespace

std::optional<std::filesystem::path> decoded_cache_dir() {
  if (const char* own = std::getenv("LACONIC_CACHE_DIR")) {
    const std::string dir = own;
    if (dir.empty() || dir == "off") return std::nullopt;
    return std::filesystem::path(dir);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "laconic";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "laconic";
  return std::nullopt;
}

namespace {

std::filesystem::path file_for(const std::filesystem::path& dir, const SplitKey& key) {
  return dir / ("split-" + fnv1a_hex(key.name) + ".bin");
}

}  // namespace

std::optional<DataSplit> load_decoded_split(const std::filesystem::path& dir, const SplitKey& key) {
  const auto mapping = map_file(file_for(dir, key));
  if (!mapping) return std::nullopt;
  HeaderReader header(static_cast<const char*>(mapping->address), mapping->size);
  std::array<char, 16> magic{};
  std::uint64_t key_size = 0;
  std::string stored_key;
  Entry inputs, labels;
  if (!header.read(magic) || magic != kCacheMagic || !header.read(key_size) || !header.read_bytes(stored_key, key_size) ||
      stored_key != key.key || !header.read_entry(inputs) || !header.read_entry(labels))
    return std::nullopt;
  auto input_tensor = tensor_at(mapping, inputs);
  auto label_tensor = tensor_at(mapping, labels);
  if (!input_tensor || !label_tensor || input_tensor->size(0) != label_tensor->size(0)) return std::nullopt;
  return DataSplit{*input_tensor, *label_tensor};
}

bool store_decoded_split(const std::filesystem::path& dir, const SplitKey& split_key, const DataSplit& split) {
  const std::string& key = split_key.key;
  const torch::Tensor inputs = split.inputs.contiguous(), labels = split.labels.contiguous();
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return false;
  const std::filesystem::path path = file_for(dir, split_key);
  const std::filesystem::path temporary = path.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    // The header's size first (its entries hold the data's offsets, which follow it).
    const std::uint64_t key_size = key.size();
    std::size_t header_size = kCacheMagic.size() + sizeof key_size + key.size();
    for (const auto* t : {&inputs, &labels})
      header_size += 2 * sizeof(std::int64_t) + t->dim() * sizeof(std::int64_t) + 2 * sizeof(std::uint64_t);
    const Entry entries[2] = {entry_of(inputs, round_up(header_size)),
                              entry_of(labels, round_up(round_up(header_size) + inputs.nbytes()))};
    auto put = [&out](const auto& value) { out.write(reinterpret_cast<const char*>(&value), sizeof value); };
    out.write(kCacheMagic.data(), kCacheMagic.size());
    put(key_size);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    for (const Entry& e : entries) {
      put(e.dtype);
      put(static_cast<std::int64_t>(e.shape.size()));
      for (const std::int64_t d : e.shape) put(d);
      put(e.offset);
      put(e.bytes);
    }
    const torch::Tensor* tensors[2] = {&inputs, &labels};
    for (int i = 0; i < 2; ++i) {
      out.seekp(static_cast<std::streamoff>(entries[i].offset));
      out.write(static_cast<const char*>(tensors[i]->data_ptr()), static_cast<std::streamsize>(entries[i].bytes));
    }
    out.close();
    if (!out) {
      std::filesystem::remove(temporary, error);
      return false;
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (!error) return true;
  std::filesystem::remove(temporary, error);
  return false;
}

DataSplit decoded_split(const SplitKey& key, const std::function<DataSplit()>& decode) {
  const auto dir = decoded_cache_dir();
  if (dir)
    if (auto stored = load_decoded_split(*dir, key)) return *stored;
  DataSplit split = decode();
  if (dir) store_decoded_split(*dir, key, split);
  return split;
}

}  // namespace laconic::train
