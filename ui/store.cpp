#include "ui/store.hpp"

#include <sqlite3.h>

#include <filesystem>

#include "storage/statement.hpp"

namespace laconic::ui {
namespace {

std::int64_t data_version(storage::Database& db) {
  storage::Statement q(db.handle(), "PRAGMA data_version");
  return q.step() ? q.column_int64(0) : 0;
}

}  // namespace

ReadOnlyStore::ReadOnlyStore(std::string path) : path_(std::move(path)) {
  wal_files_before_ = std::filesystem::exists(path_ + "-wal") || std::filesystem::exists(path_ + "-shm");
  idle_.push_back(storage::Database::open_read_only(path_, /*migrate_older=*/false));
  watcher_ = std::thread([this] { watch(); });
}

ReadOnlyStore::~ReadOnlyStore() {
  stop_ = true;
  changed_.notify_all();
  watcher_.join();
  idle_.clear();  // every connection closed (the watcher's with its thread): then the files it made go
  if (!wal_files_before_) storage::remove_unused_wal_files(path_);
}

ReadOnlyStore::Lease::Lease(ReadOnlyStore& s) : store(s) {
  {
    std::lock_guard<std::mutex> lock(store.pool_mutex_);
    if (!store.idle_.empty()) {
      db = std::move(store.idle_.back());
      store.idle_.pop_back();
    }
  }
  if (!db) db = storage::Database::open_read_only(store.path_, false);
}

ReadOnlyStore::Lease::~Lease() {
  std::lock_guard<std::mutex> lock(store.pool_mutex_);
  store.idle_.push_back(std::move(db));
}

// Its own connection: data_version tells a connection about other connections' commits.
void ReadOnlyStore::watch() {
  std::unique_ptr<storage::Database> db;
  std::int64_t seen = 0;
  std::unique_lock<std::mutex> lock(change_mutex_);
  while (!stop_) {
    try {
      if (!db) {
        db = storage::Database::open_read_only(path_, false);
        seen = data_version(*db);
      }
      const std::int64_t now = data_version(*db);
      if (now != seen) {
        seen = now;
        ++changes_;
        changed_.notify_all();
      }
    } catch (const std::exception&) {
      db.reset();  // a locked or vanished file: try again at the next tick
    }
    changed_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_.load(); });
  }
}

std::uint64_t ReadOnlyStore::wait_for_change(std::uint64_t seen, std::chrono::milliseconds timeout,
                                             const std::atomic<bool>& stopping) {
  std::unique_lock<std::mutex> lock(change_mutex_);
  changed_.wait_for(lock, timeout, [&] { return changes_ != seen || stopping || stop_; });
  return changes_;
}

}  // namespace laconic::ui
