// A sweep split with `laconic run --shard I/N` into one database per shard, then gathered with
// `laconic merge`, holds the same runs with the same metrics as the sweep run whole; merging
// again adds nothing; a malformed --shard is refused before anything runs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

const char* const kSweep =
    "experiment {\n"
    "  name = \"shards\",\n"
    "  data = synthetic { shape = {1, 8, 8}, n = 256, test_n = 64 },\n"
    "  model = mlp { sizes = {64, 16, 10} },\n"
    "  optimizer = sgd { lr = 0.1 },\n"
    "  batch_size = 16, workers = 2, max_steps = 4, eval_limit = 64,\n"
    "  compressor = sweep { none(), topk { ratio = 0.25 } },\n"
    "  seeds = { 1, 2 },\n"
    "}\n";

// run name -> "key step worker value" of its train_loss rows, and how many runs FINISHED.
std::map<std::string, std::vector<std::string>> loss_texts_and_finished(const std::string& path, int& finished) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement rows(
      db->handle(),
      "SELECT r.name, m.step || ' ' || m.worker || ' ' || m.value FROM metrics m "
      "JOIN runs r ON r.id = m.run_id WHERE m.key = 'train_loss' ORDER BY r.name, m.step, m.worker");
  std::map<std::string, std::vector<std::string>> out;
  while (rows.step()) out[rows.column_text(0)].push_back(rows.column_text(1));
  storage::Statement count(db->handle(), "SELECT count(*) FROM runs WHERE status = 'FINISHED'");
  count.step();
  finished = static_cast<int>(count.column_int64(0));
  return out;
}

}  // namespace

TEST_CASE("two shards merged hold the runs and losses of the whole sweep", "[cli][e2e][shard]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/shards.lua", kSweep);
  const auto whole = run_laconic(dir, "run shards.lua --db whole.db --quiet", 300);
  INFO(whole.out << whole.err);
  REQUIRE(whole.status == 0);
  const auto zero = run_laconic(dir, "run shards.lua --shard 0/2 --db s0.db --quiet", 300);
  const auto one = run_laconic(dir, "run shards.lua --shard 1/2 --db s1.db --quiet", 300);
  INFO(zero.out << zero.err << one.out << one.err);
  REQUIRE(zero.status == 0);
  REQUIRE(one.status == 0);
  CHECK_THAT(zero.out, Catch::Contains("2 runs, 2 finished"));
  CHECK_THAT(one.out, Catch::Contains("2 runs, 2 finished"));
  const auto merged = run_laconic(dir, "merge all.db s0.db s1.db", 60);
  INFO(merged.out << merged.err);
  REQUIRE(merged.status == 0);
  CHECK_THAT(merged.out, Catch::Contains("s0.db: 2 runs added") && Catch::Contains("s1.db: 2 runs added"));
  int finished_whole = 0, finished_merged = 0;
  const auto expected = loss_texts_and_finished(dir + "/whole.db", finished_whole);
  const auto got = loss_texts_and_finished(dir + "/all.db", finished_merged);
  CHECK(finished_whole == 4);
  CHECK(finished_merged == 4);
  REQUIRE(expected.size() == 4);
  CHECK(got == expected);  // same names, same steps, bit-identical losses
  const auto again = run_laconic(dir, "merge all.db s0.db", 60);
  CHECK_THAT(again.out, Catch::Contains("s0.db: 0 runs added") && Catch::Contains("2 already there"));
  const auto report = run_laconic(dir, "report shards --db all.db --out rep --allow-missing-figures", 120);
  INFO(report.out << report.err);
  CHECK(report.status == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a malformed --shard is refused before anything runs", "[cli][shard]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/shards.lua", kSweep);
  for (const char* bad : {"2/2", "1", "a/b", "1/0", "-1/2", "0/2x"}) {
    const auto r = run_laconic(dir, std::string("run shards.lua --db x.db --shard '") + bad + "'", 60);
    INFO(bad << ": " << r.out << r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains("--shard must be I/N with 0 <= I < N"));
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/x.db"));
  std::filesystem::remove_all(dir);
}
