#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

using namespace laconic;
using namespace laconic::testing;
using namespace std::chrono_literals;

namespace {

// The pid of the child of `parent` whose command line holds "--rank <rank>", or -1.
pid_t find_worker(pid_t parent, int rank) {
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
    const std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.find(std::string("--rank\0", 7) + std::to_string(rank) + '\0') !=
        std::string::npos)
      return pid;
  }
  return -1;
}

std::int64_t recorded_steps(const std::string& db_path, std::int64_t run_id) {
  try {
    auto db = storage::Database::open_read_only(db_path);
    auto summary = storage::summary_of(*db, run_id);
    auto it = summary.find("train_loss");
    return it == summary.end() ? 0 : it->second.count;
  } catch (const std::exception&) {
    return 0;  // not created yet, or busy: ask again
  }
}

}  // namespace

TEST_CASE("a worker killed with SIGKILL fails its run, keeps its metrics, and the sweep goes on",
          "[cli][e2e][killed]") {
  const auto dir = make_temp_dir();
  // Run 1 is long (a whole epoch at batch 8); run 2 takes 4 steps.
  write_file(dir + "/kill.lua",
             tiny_experiment("kill", "  batch_size = 8,\n  max_steps = sweep { 0, 4 },\n"));
  const std::string db_path = dir + "/k.db";
  const pid_t controller = start_laconic(dir, {"run", "kill.lua", "--db", "k.db"});
  REQUIRE(controller > 0);

  // Wait until run 1 has recorded some steps, then kill its rank-1 worker.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (recorded_steps(db_path, 1) < 10 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  const pid_t victim = find_worker(controller, 1);
  REQUIRE(victim > 0);
  REQUIRE(::kill(victim, SIGKILL) == 0);

  int status = 0;
  const auto exit_deadline = std::chrono::steady_clock::now() + 180s;
  while (::waitpid(controller, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > exit_deadline) {
      ::kill(controller, SIGKILL);
      ::waitpid(controller, &status, 0);
      FAIL("the controller hung after a worker was killed");
    }
    std::this_thread::sleep_for(100ms);
  }
  const std::string out = read_file(dir + "/.stdout");
  INFO(out << read_file(dir + "/.stderr"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK_THAT(out, Catch::Contains("2 runs, 1 finished, 1 failed"));

  auto db = storage::Database::open_read_only(db_path);
  auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].status == "FAILED");
  CHECK_THAT(runs[0].error, Catch::Contains("worker 1 was killed by signal 9"));
  CHECK(storage::metrics_of(*db, runs[0].id, "train_loss").size() >= 10);
  CHECK(runs[1].status == "FINISHED");
  CHECK(storage::metrics_of(*db, runs[1].id, "train_loss").size() == 8);

  char* message = nullptr;
  std::string integrity;
  sqlite3_exec(
      db->handle(), "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &integrity, &message);
  sqlite3_free(message);
  CHECK(integrity == "ok");
  std::filesystem::remove_all(dir);
}
