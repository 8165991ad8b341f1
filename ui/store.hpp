#pragma once
// The database as `laconic ui` reads it: read-only connections only (never a migration, never a
// write), one lent to each request at a time, and a watcher that tells when another connection
// committed (PRAGMA data_version), which the event stream announces to the pages.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/database.hpp"

namespace laconic::ui {

class ReadOnlyStore {
 public:
  /// Opens `path` read-only once to check it: StorageError when it is missing or not a laconic
  /// database, ConfigError when its schema is older (this never migrates).
  explicit ReadOnlyStore(std::string path);
  ~ReadOnlyStore();
  ReadOnlyStore(const ReadOnlyStore&) = delete;
  ReadOnlyStore& operator=(const ReadOnlyStore&) = delete;

  const std::string& path() const { return path_; }

  /// Calls `read` with a connection no other request holds meanwhile.
  template <class Read>
  auto with(Read&& read) {
    Lease lease(*this);
    return read(*lease.db);
  }

  /// Counts the commits other connections made, as the watcher saw them (every 200 ms).
  std::uint64_t changes() const { return changes_; }
  /// Waits until changes() differs from `seen`, `timeout` passes or `stopping` is true; returns
  /// changes().
  std::uint64_t wait_for_change(std::uint64_t seen, std::chrono::milliseconds timeout,
                                const std::atomic<bool>& stopping);

 private:
  struct Lease {
    explicit Lease(ReadOnlyStore& store);
    ~Lease();
    ReadOnlyStore& store;
    std::unique_ptr<storage::Database> db;
  };
  void watch();

  std::string path_;
  bool wal_files_before_ = false;  // they were there when it opened: someone else's to remove
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<storage::Database>> idle_;
  std::atomic<std::uint64_t> changes_{0};
  std::mutex change_mutex_;
  std::condition_variable changed_;
  std::atomic<bool> stop_{false};
  std::thread watcher_;  // last: started once the rest exists
};

}  // namespace laconic::ui
