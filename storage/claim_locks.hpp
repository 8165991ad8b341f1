#pragma once
// Claims of runs that a controller trains while the database cannot take writes (another
// process holds its lock): the claim is written later, so meanwhile other controllers on the
// same host are kept off the run by a lock on one byte of DATABASE.claims (byte RUN_ID, an
// open-file-description lock: released when this process ends, however it ends). The database's
// own claim (Recorder::start_run with the attempts the plan saw) stays the last word: a lock
// file only spares a second controller from training a run that would then be discarded.
#include <cstdint>
#include <set>
#include <string>

namespace laconic::storage {

class ClaimLocks {
 public:
  /// For the database at `database` (the file is DATABASE.claims; created on the first hold()).
  explicit ClaimLocks(std::string database);
  ~ClaimLocks();
  ClaimLocks(const ClaimLocks&) = delete;
  ClaimLocks& operator=(const ClaimLocks&) = delete;

  /// Takes run `run_id`'s lock; false when another holder (process or ClaimLocks) has it.
  /// StorageError when the file cannot be made or locked for another reason.
  bool hold(std::int64_t run_id);
  /// Gives run `run_id`'s lock back; the file is removed once this holds none (another
  /// controller's lock, if any, stays on its own open file).
  void release(std::int64_t run_id);
  /// Whether someone other than this object holds run `run_id`'s lock (false when there is no
  /// file: nobody trains a run unclaimed).
  bool held_elsewhere(std::int64_t run_id) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::set<std::int64_t> held_;
};

}  // namespace laconic::storage
