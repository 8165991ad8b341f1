#pragma once
// What the fault tests share (faults_test.cpp, bad_databases_test.cpp): the runs and rows a
// database holds, a calm sweep to measure "nothing lost" against, waiting for a condition, a
// controller's leftover rendezvous directories, and a tmpfs of a given size (root only).
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/statement.hpp"

namespace laconic::testing::faults {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

inline std::vector<storage::RunRow> runs_of(const std::string& db_path) {
  auto db = storage::Database::open_read_only(db_path);
  return storage::list_runs(*db);
}

// Metric rows per run, in id order: what "nothing lost" is measured against.
inline std::vector<std::int64_t> rows_per_run(const std::string& db_path) {
  auto db = storage::Database::open_read_only(db_path);
  std::vector<std::int64_t> rows;
  for (const auto& run : storage::list_runs(*db)) {
    storage::Statement q(db->handle(), "SELECT count(*) FROM metric_values WHERE run_id = ?1");
    q.bind_int64(1, run.id);
    q.step();
    rows.push_back(q.column_int64(0));
  }
  return rows;
}

// A sweep of `compressors` under `name`, max_steps each, trained once undisturbed into calm.db;
// returns that database's rows per run.
inline std::vector<std::int64_t> write_sweep_and_train_calm(const std::string& dir, const std::string& name, int max_steps,
                                                     const std::string& compressors) {
  write_file(dir + "/" + name + ".lua",
             tiny_experiment(name, str_cat("  max_steps = ", max_steps, ",\n  compressor = sweep { ", compressors,
                                           " },\n")));
  REQUIRE(run_laconic(dir, "run " + name + ".lua --db calm.db --quiet").status == 0);
  return rows_per_run(dir + "/calm.db");
}

// Waits until `pred` holds or `seconds` pass; true if it held.
template <class Pred>
inline bool eventually(Pred pred, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

inline bool no_store_dir_of(pid_t controller) {
  const std::string prefix = "laconic-store-" + std::to_string(controller) + "-";
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    if (entry.path().filename().string().starts_with(prefix)) return false;
  return true;
}

inline bool is_root() { return ::geteuid() == 0; }

// A tmpfs of `size` mounted on `dir` for the test's lifetime (root only).
class Tmpfs {
 public:
  Tmpfs(const std::string& dir, const std::string& size) : dir_(dir) {
    std::filesystem::create_directories(dir);
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~Tmpfs() { unmount(); }
  void unmount() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    mounted_ = false;
  }
  bool mounted() const { return mounted_; }
  bool remount_read_only() { return ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

}  // namespace laconic::testing::faults
