#include "engine/train/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <ATen/CPUGeneratorImpl.h>

#include "engine/core/error.hpp"
#include "engine/core/hash.hpp"
#include "engine/train/on_device.hpp"

namespace laconic::train {
namespace {

constexpr std::uint64_t kCheckpointMagic = 0x4b50434e4f43414cull;  // "LACONCPK" little-endian
// 2: the topology's state (a parameter server's per-shard compressors) after the schedule's.
// 3: the trainer's state begins with whether worker 0 recorded decoded_payloads (its once-per-run
// metric), so that a resumed run does not record it again. Format 2 files are still read.
constexpr std::uint64_t kFormat = 3;
constexpr std::uint64_t kOldestFormat = 2;

void text(StateWriter& out, const std::string& value) { out.array(std::span<const char>(value.data(), value.size())); }

std::string text(StateReader& in) {
  std::vector<char> chars;
  in.array(chars);
  return {chars.begin(), chars.end()};
}

void sync_fd(int fd, const std::string& path) {
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    throw Error(str_cat("cannot sync ", path, ": ", std::strerror(error)));
  }
}

}  // namespace

std::string config_fingerprint(const RunConfig& config) {
  // The checkpoints on disk carry it: the old start, and no leading zeros.
  return str_cat(std::hex, Fnv1a(Fnv1a::kTruncatedBasis).add(config.to_json().dump()).value());
}

void write_file_atomically(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(str_cat("cannot write checkpoint ", temporary, ": ", std::strerror(errno)));
  // A failed write (a full disk) leaves no half-written temporary behind.
  auto fail = [&](const std::string& what, int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw Error(str_cat(what, ": ", std::strerror(error)));
  };
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(str_cat("cannot write checkpoint ", temporary), n < 0 ? errno : ENOSPC);
    written += static_cast<std::size_t>(n);
  }
  try {
    sync_fd(fd, temporary);  // closes fd when it throws
  } catch (const Error&) {
    ::unlink(temporary.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw Error(str_cat("cannot rename checkpoint ", temporary, " to ", path, ": ", std::strerror(error)));
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    sync_fd(dir_fd, dir);
    ::close(dir_fd);
  }
}

std::vector<std::uint8_t> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(str_cat("cannot read checkpoint ", path, ": ", std::strerror(errno)));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_checkpoint_header(StateWriter& out, const std::string& fingerprint, int rank,
                             const TrainingPosition& position) {
  out.u64(kCheckpointMagic);
  out.u64(kFormat);
  text(out, fingerprint);
  out.i64(rank);
  out.i64(position.step);
  out.i64(position.epoch);
  out.i64(position.index);
  out.f64(position.epoch_loss_sum);
  out.f64(position.first_loss);
  out.f64(position.wall);
  out.f64(position.epoch_elapsed);
}

TrainingPosition read_checkpoint_header(StateReader& in, const std::string& fingerprint, int rank,
                                        const std::string& path) {
  if (in.u64() != kCheckpointMagic) throw ConfigError(str_cat(path, " is not a laconic checkpoint"));
  const std::uint64_t format = in.u64();
  if (format < kOldestFormat || format > kFormat)
    throw ConfigError(str_cat("checkpoint ", path, " has format ", format, "; this laconic reads ", kOldestFormat,
                              " to ", kFormat));
  const std::string theirs = text(in);
  if (theirs != fingerprint)
    throw ConfigError(str_cat("checkpoint ", path, " belongs to another run configuration (fingerprint ", theirs,
                              ", this run ", fingerprint, ")"));
  const std::int64_t their_rank = in.i64();
  if (their_rank != rank)
    throw ConfigError(str_cat("checkpoint ", path, " is rank ", their_rank, "'s, read by rank ", rank));
  TrainingPosition p;
  p.step = in.i64();
  p.epoch = in.i64();
  p.index = in.i64();
  p.epoch_loss_sum = in.f64();
  p.first_loss = in.f64();
  p.wall = in.f64();
  p.epoch_elapsed = in.f64();
  p.format = format;
  return p;
}

void write_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                      const TrainingPosition& position, const std::function<void(StateWriter&)>& body) {
  std::vector<std::uint8_t> bytes;
  StateWriter out(bytes);
  write_checkpoint_header(out, fingerprint, rank, position);
  body(out);
  write_file_atomically(path, bytes);
}

TrainingPosition read_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                                 const std::function<void(StateReader&, const TrainingPosition&)>& body) {
  const std::vector<std::uint8_t> bytes = read_whole_file(path);
  StateReader in(bytes);
  try {
    const TrainingPosition position = read_checkpoint_header(in, fingerprint, rank, path);
    body(in, position);
    LACONIC_ENFORCE(in.done(), "checkpoint ", path, " has bytes left after its last section");
    return position;
  } catch (const InvariantError& e) {
    throw ConfigError(str_cat("checkpoint ", path, " does not fit this run: ", e.what()));
  }
}

namespace {

// Parameters then buffers, in registration order: the same list on save and load.
std::vector<std::pair<std::string, torch::Tensor>> model_tensors(Model& model) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : model.named_parameters()) out.emplace_back(item.key(), item.value());
  for (const auto& item : model.named_buffers()) out.emplace_back("buffer " + item.key(), item.value());
  return out;
}

}  // namespace

void save_model(StateWriter& out, Model& model) {
  const auto tensors = model_tensors(model);
  out.u64(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    text(out, name);
    out.i64(static_cast<std::int64_t>(tensor.scalar_type()));
    out.array(tensor.sizes().vec());
    const auto c = host_copy(tensor.detach());
    out.array(std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(c.data_ptr()), c.nbytes()));
  }
}

void load_model(StateReader& in, Model& model) {
  const auto tensors = model_tensors(model);
  const std::uint64_t count = in.u64();
  if (count != tensors.size())
    throw ConfigError(
        str_cat("checkpoint holds ", count, " model tensors, model '", model.name(), "' has ", tensors.size()));
  torch::NoGradGuard no_grad;
  std::vector<std::int64_t> sizes;
  std::vector<std::uint8_t> bytes;
  for (const auto& [name, tensor] : tensors) {
    const std::string saved = text(in);
    const auto dtype = in.i64();
    in.array(sizes);
    in.array(bytes);
    if (saved != name || dtype != static_cast<std::int64_t>(tensor.scalar_type()) || sizes != tensor.sizes().vec() ||
        bytes.size() != tensor.nbytes())
      throw ConfigError(
          str_cat("checkpoint tensor '", saved, "' does not fit model tensor '", name, "' of ", model.name()));
    auto source = torch::from_blob(bytes.data(), tensor.sizes(), tensor.options().device(torch::kCPU));
    tensor.copy_(source);
  }
}

void save_torch_generator(StateWriter& out) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  const auto state = generator.get_state();
  out.array(std::span<const std::uint8_t>(state.data_ptr<std::uint8_t>(), static_cast<std::size_t>(state.numel())));
}

void load_torch_generator(StateReader& in) {
  std::vector<std::uint8_t> bytes;
  in.array(bytes);
  auto state = torch::from_blob(bytes.data(), {static_cast<std::int64_t>(bytes.size())}, torch::kUInt8).clone();
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

}  // namespace laconic::train
