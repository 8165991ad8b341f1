#pragma once
// Shared by the storage tests: a temporary directory and a small RunConfig.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "engine/core/run_config.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

namespace laconic::storage::testing {

/// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("laconic-storage-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;  // leave a stray directory rather than throw from a destructor
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The first column of the first row `sql` returns (a count, an id).
inline std::int64_t scalar(Database& db, const std::string& sql) {
  Statement q(db.handle(), sql);
  if (!q.step()) throw std::runtime_error("no row from: " + sql);
  return q.column_int64(0);
}

/// The rows of `table`.
inline std::int64_t count_rows(Database& db, const std::string& table) { return scalar(db, "SELECT count(*) FROM " + table); }

/// ":memory:" for kind "memory", else a file in `dir`; tests GENERATE the kind, not the path,
/// because a generator outlives the TempDir of the pass that created it.
inline std::string database_path(const std::string& kind, const TempDir& dir) {
  return kind == "memory" ? ":memory:" : dir.file("runs.db");
}

/// A run configuration as the controller would record it.
inline RunConfig sample_config(const std::string& compressor, std::int64_t seed) {
  RunConfig config;
  config.experiment = "fmnist-topk";
  config.name = "compressor=" + compressor + ",seed=" + std::to_string(seed);
  config.dataset = {"dataset", "fashion_mnist", {}};
  config.model = {"model", "lenet5", {}};
  config.optimizer = {"optimizer", "sgd", {{"lr", 0.05}}};
  config.topology = {"topology", "allreduce", {}};
  config.schedule = {"schedule", "synchronous", {}};
  config.compressor = {"compressor", compressor, {}};
  config.seed = seed;
  config.swept = {{"compressor", std::string(compressor)}, {"seed", seed}};
  return config;
}

}  // namespace laconic::storage::testing
