// placement = threads() end to end: `laconic run` of a sweep over both placements records the
// same losses, payloads, bytes and messages for both, step by step and rank by rank; the thread
// run's facts and report say which of its times are CPU time, derived or projected; and what
// threads cannot run is refused with the reason before anything trains.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

std::string experiment(const std::string& extra, const std::string& compressor = "topk { ratio = 0.1 }") {
  return "experiment {\n"
         "  name = \"placement\",\n"
         "  data = synthetic { shape = {1, 8, 8}, n = 512, test_n = 64 },\n"
         "  model = mlp { sizes = {64, 16, 10} },\n"
         "  optimizer = sgd { lr = 0.1, momentum = 0.9 },\n"
         "  batch_size = 16, workers = 4, max_steps = 5, eval_limit = 64, timeout = 30,\n"
         "  compressor = " +
         compressor +
         ",\n"
         "  placement = sweep { processes(), threads() },\n" +
         extra + "}\n";
}

// placement -> "key step worker value" of what does not depend on time.
std::map<std::string, std::vector<std::string>> results(const std::string& path) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement rows(
      db->handle(),
      "SELECT json_extract(r.swept, '$.placement'), m.key || ' ' || m.step || ' ' || m.worker || ' ' "
      "|| m.value FROM metrics m JOIN runs r ON r.id = m.run_id WHERE m.key IN ('train_loss', "
      "'payload_bytes', 'bytes_sent', 'messages', 'link_bytes', 'test_accuracy') "
      "ORDER BY r.id, m.key, m.step, m.worker");
  std::map<std::string, std::vector<std::string>> out;
  while (rows.step()) out[rows.column_text(0)].push_back(rows.column_text(1));
  return out;
}

std::string fact(const std::string& path, const std::string& placement, const std::string& key) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement q(db->handle(),
                       "SELECT f.value FROM run_facts f JOIN runs r ON r.id = f.run_id "
                       "WHERE json_extract(r.swept, '$.placement') = ?1 AND f.key = ?2");
  q.bind_text(1, placement);
  q.bind_text(2, key);
  return q.step() ? q.column_text(0) : "";
}

}  // namespace

TEST_CASE("a run with its ranks as threads records what the same run with a process per rank records",
          "[cli][e2e][placement]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/placement.lua", experiment(""));
  const auto run = run_laconic(dir, "run placement.lua --db p.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.out, Catch::Contains("2 runs, 2 finished"));
  const auto by_placement = results(dir + "/p.db");
  REQUIRE(by_placement.count("processes") == 1);
  REQUIRE(by_placement.count("threads") == 1);
  CHECK(by_placement.at("processes").size() > 4 * 5);
  CHECK(by_placement.at("threads") == by_placement.at("processes"));
  // The run's facts say how its times were taken; a process per rank keeps the wall clock.
  CHECK(fact(dir + "/p.db", "threads", "rank_clock") == "thread_cpu");
  CHECK(fact(dir + "/p.db", "processes", "rank_clock") == "wall");
  // Two processes on one host: waiting measured on their shared board, without a barrier.
  CHECK(fact(dir + "/p.db", "processes", "wait_measured") == "arrival_board");
  const auto report = run_laconic(dir, "report placement --db p.db --allow-missing-figures", 120);
  INFO(report.out << report.err);
  REQUIRE(report.status == 0);
  const std::string md = read_file(dir + "/laconic-reports/placement/report.md");
  CHECK_THAT(md, Catch::Contains("Ranks as threads (placement = threads()): placement=threads"));
  CHECK_THAT(md, Catch::Contains("nothing of theirs was measured on a wire"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("laconic check refuses what ranks placed as threads cannot run, and says why", "[cli][placement]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/overlap.lua", experiment("  topology = allreduce { overlap = true },\n", "none()"));
  const auto overlap = run_laconic(dir, "check overlap.lua", 60);
  CHECK(overlap.status == 2);
  CHECK_THAT(overlap.err, Catch::Contains("placement = threads() cannot run allreduce { overlap = true }"));
  write_file(dir + "/emulated.lua", experiment("  network = link { bandwidth = \"100Mbit\", emulate = true },\n"));
  const auto emulated = run_laconic(dir, "check emulated.lua", 60);
  CHECK(emulated.status == 2);
  CHECK_THAT(emulated.err, Catch::Contains("placement = threads() cannot run an emulated link"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a LACONIC_ARRIVALS the workers cannot read is refused before anything trains", "[cli][placement]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/placement.lua", experiment(""));
  ::setenv("LACONIC_ARRIVALS", "barrier", 1);
  const auto run = run_laconic(dir, "run placement.lua --db p.db", 60);
  ::unsetenv("LACONIC_ARRIVALS");
  INFO(run.out << run.err);
  CHECK(run.status == 2);
  CHECK_THAT(run.err, Catch::Contains("LACONIC_ARRIVALS is 'barrier': expected 'auto' (the default) or 'stamps'"));
  CHECK_FALSE(std::filesystem::exists(dir + "/p.db"));
  std::filesystem::remove_all(dir);
}
