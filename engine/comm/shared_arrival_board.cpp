#include "engine/comm/shared_arrival_board.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/core/error.hpp"

namespace laconic::comm {
namespace {

constexpr const char* kHostKey = "laconic/arrival_board/host/";
constexpr const char* kPathKey = "laconic/arrival_board/path";

/// This kernel's boot: processes that share it share CLOCK_MONOTONIC. Empty when unknown.
std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

std::vector<char> text_bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text_of(const std::vector<char>& v) { return {v.begin(), v.end()}; }

constexpr const char* kBoardDirectory = "/dev/shm";
constexpr const char* kBoardPrefix = "laconic-arrivals-";

/// A name no other run on this host uses: rank 0's pid, then the moment.
std::string fresh_board_path() {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return str_cat(kBoardDirectory, "/", kBoardPrefix, ::getpid(), "-", now);
}

}  // namespace

void remove_orphaned_boards() {
  try {
    for (const auto& entry : std::filesystem::directory_iterator(kBoardDirectory)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(kBoardPrefix, 0) != 0) continue;
      const auto pid = static_cast<pid_t>(std::atoll(name.c_str() + std::strlen(kBoardPrefix)));
      // A rank 0 killed between creating its board and every rank connecting left it behind.
      std::error_code ignored;  // another rank 0 may remove it first
      if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), ignored);
    }
  } catch (const std::filesystem::filesystem_error&) {
    // No /dev/shm to sweep: nothing was left there either.
  }
}

SharedArrivalBoard::SharedArrivalBoard(const std::string& path, int rank, int size, bool create)
    : bytes_(2 * static_cast<std::size_t>(size) * sizeof(double)), rank_(rank), size_(size) {
  const int fd = ::open(path.c_str(), create ? (O_RDWR | O_CREAT | O_EXCL) : O_RDWR, 0600);
  if (fd < 0)
    throw CommError(str_cat("rank ", rank, ": cannot open the arrival board '", path, "': ", std::strerror(errno)));
  // A new file is zero-filled by ftruncate; the others map what rank 0 sized.
  if (create && ::ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(path.c_str());
    throw CommError(str_cat("rank ", rank, ": cannot size the arrival board '", path, "': ", std::strerror(error)));
  }
  void* mapped = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED)
    throw CommError(str_cat("rank ", rank, ": cannot map the arrival board '", path, "': ", std::strerror(error)));
  slots_ = static_cast<double*>(mapped);
}

SharedArrivalBoard::~SharedArrivalBoard() { ::munmap(slots_, bytes_); }

void SharedArrivalBoard::arrive(double seconds) {
  // Each rank writes its own slot; the exchange's collective (system calls on sockets) orders the
  // write before every other rank's read.
  double& slot = slots_[(exchange_ % 2) * static_cast<std::size_t>(size_) + static_cast<std::size_t>(rank_)];
  std::atomic_ref<double>(slot).store(seconds, std::memory_order_release);
}

double SharedArrivalBoard::latest() {
  double* row = slots_ + (exchange_++ % 2) * static_cast<std::size_t>(size_);
  double latest = std::atomic_ref<double>(row[0]).load(std::memory_order_acquire);
  for (int r = 1; r < size_; ++r)
    latest = std::max(latest, std::atomic_ref<double>(row[r]).load(std::memory_order_acquire));
  return latest;
}

SharedBoardSetup open_shared_arrival_board(KeyValueStore& store, int rank, int size, std::chrono::milliseconds timeout,
                                           bool board_wanted) {
  SharedBoardSetup setup;
  if (size < 2) return setup;
  const std::string host = boot_id();
  if (rank != 0) {
    store.set(str_cat(kHostKey, rank), text_bytes(host));
    const std::string path = text_of(store.get(kPathKey, timeout));
    if (!path.empty()) setup.board = std::make_unique<SharedArrivalBoard>(path, rank, size, false);
    return setup;
  }
  bool one_host = !host.empty();
  for (int r = 1; r < size && one_host; ++r) one_host = text_of(store.get(str_cat(kHostKey, r), timeout)) == host;
  if (one_host && board_wanted) {
    remove_orphaned_boards();
    try {
      setup.path = fresh_board_path();
      setup.board = std::make_unique<SharedArrivalBoard>(setup.path, rank, size, true);
    } catch (const CommError&) {
      setup.path.clear();  // no /dev/shm here: every rank measures with a barrier
    }
  }
  store.set(kPathKey, text_bytes(setup.path));
  return setup;
}

void remove_shared_board_file(SharedBoardSetup& setup) {
  if (!setup.path.empty()) ::unlink(setup.path.c_str());
  setup.path.clear();
}

}  // namespace laconic::comm
