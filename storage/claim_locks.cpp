#include "storage/claim_locks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/error.hpp"

namespace laconic::storage {
namespace {

// One byte at offset `run_id`, or (run_id < 0) the whole file.
struct flock byte_of(std::int64_t run_id, short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = run_id < 0 ? 0 : static_cast<off_t>(run_id);
  lock.l_len = run_id < 0 ? 0 : 1;
  lock.l_pid = 0;  // required for open-file-description locks
  return lock;
}

// Whether a lock of another open file description covers `run_id` (every byte when < 0).
bool locked_by_other(int fd, std::int64_t run_id) {
  struct flock probe = byte_of(run_id, F_WRLCK);
  if (::fcntl(fd, F_OFD_GETLK, &probe) != 0) return false;
  return probe.l_type != F_UNLCK;
}

}  // namespace

ClaimLocks::ClaimLocks(std::string database) : path_(std::move(database) + ".claims") {}

ClaimLocks::~ClaimLocks() {
  if (fd_ < 0) return;
  // Claims still held when the controller leaves (a stop while the database was locked) go with
  // it; the file goes too unless another controller holds a claim in it.
  if (!locked_by_other(fd_, -1)) ::unlink(path_.c_str());
  ::close(fd_);
}

bool ClaimLocks::hold(std::int64_t run_id) {
  if (held_.count(run_id) > 0) return true;
  if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw StorageError(str_cat("cannot make the claim file ", path_, ": ", std::strerror(errno)), -1);
  struct flock lock = byte_of(run_id, F_WRLCK);
  if (::fcntl(fd_, F_OFD_SETLK, &lock) == 0) {
    held_.insert(run_id);
    return true;
  }
  if (errno == EAGAIN || errno == EACCES) return false;
  throw StorageError(str_cat("cannot lock run ", run_id, " in ", path_, ": ", std::strerror(errno)), -1);
}

void ClaimLocks::release(std::int64_t run_id) {
  if (held_.erase(run_id) == 0 || fd_ < 0) return;
  struct flock lock = byte_of(run_id, F_UNLCK);
  ::fcntl(fd_, F_OFD_SETLK, &lock);
  if (!held_.empty()) return;
  // Nobody else holds a lock in it: no need to leave it beside the database.
  if (!locked_by_other(fd_, -1)) ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

bool ClaimLocks::held_elsewhere(std::int64_t run_id) const {
  if (fd_ >= 0) return locked_by_other(fd_, run_id);
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = locked_by_other(fd, run_id);
  ::close(fd);
  return held;
}

}  // namespace laconic::storage
