// `laconic run --jobs J`: J controllers at once, each on cores of its own, all recording into one
// database; more ranks than cores are refused unless --oversubscribe.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

const char* const kFourRuns =
    "experiment {\n"
    "  name = \"jobs\",\n"
    "  data = synthetic { shape = {1, 8, 8}, n = 4096, test_n = 64 },\n"
    "  model = mlp { sizes = {64, 256, 10} },\n"
    "  optimizer = sgd { lr = 0.1 },\n"
    "  batch_size = 16, workers = 1, epochs = 1, eval_limit = 64,\n"
    "  seeds = { 1, 2, 3, 4 },\n"
    "}\n";

struct RunRow {
  std::string status, affinity;
  double started = 0, ended = 0;
  std::int64_t controller = 0;
};

std::vector<RunRow> job_runs_of(const std::string& path) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement rows(db->handle(),
                          "SELECT status, started, ended, controller_pid, (SELECT value FROM run_facts f WHERE "
                          "f.run_id = r.id AND f.key = 'cpu_affinity') FROM runs r ORDER BY id");
  std::vector<RunRow> out;
  while (rows.step())
    out.push_back(
        {rows.column_text(0), rows.column_text(4), rows.column_double(1), rows.column_double(2), rows.column_int64(3)});
  return out;
}

}  // namespace

TEST_CASE("--jobs 2 runs two runs at once, on cores of their own, into one database", "[cli][e2e][jobs]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/jobs.lua", kFourRuns);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const auto r =
      run_laconic(dir, std::string("run jobs.lua --db j.db --jobs 2") + (cores < 2 ? " --oversubscribe" : ""), 300);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("laconic: 2 jobs ended (exit statuses 0, 0"));
  const auto runs = job_runs_of(dir + "/j.db");
  REQUIRE(runs.size() == 4);
  std::map<std::int64_t, std::vector<RunRow>> by_job;
  for (const auto& run : runs) {
    CHECK(run.status == "FINISHED");
    by_job[run.controller].push_back(run);
  }
  REQUIRE(by_job.size() == 2);  // two controllers, two runs each
  const auto& first = by_job.begin()->second;
  const auto& second = std::next(by_job.begin())->second;
  CHECK(first.size() == 2);
  CHECK(second.size() == 2);
  // At once: the two jobs' spans overlap.
  const double first_start = first.front().started, first_end = first.back().ended;
  const double second_start = second.front().started, second_end = second.back().ended;
  CHECK(std::max(first_start, second_start) < std::min(first_end, second_end));
  // Each on a core of its own (every run of a job on the same one).
  CHECK(first.front().affinity == first.back().affinity);
  if (cores >= 2) CHECK(first.front().affinity != second.front().affinity);
  std::filesystem::remove_all(dir);
}

TEST_CASE("--jobs that need more cores than the host has are refused unless --oversubscribe", "[cli][jobs]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/jobs.lua", kFourRuns);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const auto refused = run_laconic(dir, "run jobs.lua --db j.db --jobs " + std::to_string(cores + 1), 60);
  INFO(refused.out << refused.err);
  CHECK(refused.status == 2);
  CHECK_THAT(refused.err,
             Catch::Contains("ranks on " + std::to_string(cores) + " cores") && Catch::Contains("--oversubscribe"));
  CHECK_FALSE(std::filesystem::exists(dir + "/j.db"));
  std::filesystem::remove_all(dir);
}
