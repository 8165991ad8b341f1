#pragma once
#include <sqlite3.h>
// Running the laconic binary from tests: bounded by `timeout`, output captured to strings.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "controller/launcher.hpp"
#include "controller/worker_processes.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace laconic::testing {

struct CommandResult {
  int status = -1;  ///< exit status; 124 when `timeout` stopped it
  std::string out;
  std::string err;
};

inline std::string make_temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "laconic-cli-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

/// Runs `laconic ARGS` in `dir` (ARGS already shell-quoted), at most `seconds` long.
inline CommandResult run_laconic(const std::string& dir, const std::string& args, int seconds = 300) {
  const std::string out = dir + "/.stdout", err = dir + "/.stderr";
  const std::string command = "cd '" + dir + "' && timeout " + std::to_string(seconds) + " '" + LACONIC_BINARY + "' " +
                              args + " >'" + out + "' 2>'" + err + "'";
  int raw = std::system(command.c_str());
  CommandResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

/// Starts `laconic ARGS` in `dir` in the background (stdout and stderr to dir/.stdout and
/// dir/.stderr) and returns its pid, for tests that signal the controller while it runs; the
/// caller waits for it.
inline pid_t start_laconic(const std::string& dir, std::vector<std::string> args) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;  // the parent, or -1
  if (::chdir(dir.c_str()) != 0) ::_exit(127);
  std::freopen((dir + "/.stdout").c_str(), "w", stdout);
  std::freopen((dir + "/.stderr").c_str(), "w", stderr);
  std::vector<char*> argv{const_cast<char*>(LACONIC_BINARY)};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(LACONIC_BINARY, argv.data());
  ::_exit(127);
}

/// The pid of the child of `parent` that is worker `rank` (named "laconic rank R" when forked,
/// "--rank R" on its command line when exec'd), or -1.
inline pid_t find_worker(pid_t parent, int rank) {
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), ::closedir);
  while (dirent* entry = ::readdir(proc.get())) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat.c_str() + close_paren + 1, " %c %d", &state, &ppid) != 2) continue;
    if (ppid != parent) continue;
    // A forked worker is named "laconic rank R"; an exec'd one has --rank R on its command line.
    const auto open_paren = stat.find('(');
    if (open_paren != std::string::npos &&
        stat.substr(open_paren + 1, close_paren - open_paren - 1) == controller::worker_process_name(rank))
      return pid;
    const std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.find(std::string("--rank\0", 7) + std::to_string(rank) + '\0') != std::string::npos) return pid;
  }
  return -1;
}

/// Waits up to `seconds` for `pid` to exit and returns its waitpid status; on timeout kills it
/// (SIGKILL), reaps it and returns nothing.
inline std::optional<int> wait_for_exit(pid_t pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return status;
}

// The cells of one CSV line, quotes ("a,b") taken off.
inline std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '\r') continue;  // CSV lines end in CRLF
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) cells.emplace_back();
    else cells.back() += c;
  }
  return cells;
}

// A CSV file's rows, each as its cells.
inline std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) rows.push_back(csv_cells(line));
  return rows;
}

/// The train_loss rows run `run_id` has in the database at `db_path` (0 while it is not there
/// yet or busy): how far a run a test watches has come.
inline std::int64_t recorded_steps(const std::string& db_path, std::int64_t run_id) {
  try {
    auto db = storage::Database::open_read_only(db_path);
    auto summary = storage::summary_of(*db, run_id);
    auto it = summary.find("train_loss");
    return it == summary.end() ? 0 : it->second.count;
  } catch (const std::exception&) {
    return 0;  // not created yet, or busy: ask again
  }
}

/// A small, fast experiment: 2 workers, a few steps, part of the test split.
inline std::string tiny_experiment(const std::string& name, const std::string& extra = "") {
  return "experiment {\n"
         "  name = \"" +
         name +
         "\",\n"
         "  data = fashion_mnist(),\n"
         "  model = lenet5(),\n"
         "  optimizer = sgd { lr = 0.05, momentum = 0.9 },\n"
         "  batch_size = 32,\n"
         "  workers = 2,\n"
         "  eval_limit = 500,\n"
         "  timeout = 20,\n" +
         extra + "}\n";
}

// Another process's write lock on a database (as `sqlite3 DB "BEGIN IMMEDIATE"` holds it), held
// until release() or the end of the scope.
class WriteLock {
 public:
  explicit WriteLock(const std::string& path) {
    REQUIRE(sqlite3_open(path.c_str(), &db_) == SQLITE_OK);
    sqlite3_busy_timeout(db_, 10000);
    REQUIRE(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  ~WriteLock() { release(); }
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;
  void release() {
    if (db_ == nullptr) return;
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace laconic::testing
