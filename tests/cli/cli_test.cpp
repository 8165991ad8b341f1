#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "engine/core/metric_keys.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

double sum_of(storage::Database& db, std::int64_t run, const std::string& key) {
  double s = 0;
  for (const auto& m : storage::metrics_of(db, run, key)) s += m.value;
  return s;
}

}  // namespace

TEST_CASE("laconic run trains a tiny sweep, records it, and laconic report writes the report", "[cli][e2e]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/tiny.lua", tiny_experiment("tiny",
                                                "  max_steps = 8,\n"
                                                "  compressor = sweep { none(), topk { ratio = 0.01 } },\n"));
  auto run = run_laconic(dir, "run tiny.lua --db t.db");
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.out, Catch::Contains("2 runs, 2 finished, 0 failed"));

  {
    auto db = storage::Database::open_read_only(dir + "/t.db");
    auto runs = storage::list_runs(*db);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].name == "compressor=none,seed=1");
    CHECK(runs[1].name == "compressor=topk,ratio=0.01,seed=1");
    for (const auto& r : runs) {
      CHECK(r.status == storage::RunStatus::Finished);
      CHECK(r.final_test_accuracy >= 0.0);
      CHECK(r.final_test_accuracy <= 1.0);
      // 8 steps x 2 workers of every per-step key; test metrics from worker 0 only.
      for (const char* key : {"train_loss", "time_forward", "time_backward", "time_compress", "time_communicate",
                              keys::kBytesSent, "bytes_dense"})
        CHECK(storage::metrics_of(*db, r.id, key).size() == 16);
      CHECK(storage::metrics_of(*db, r.id, "test_accuracy").size() == 1);
    }
    // Dense: what was sent is what a dense exchange costs; Top-k 1%: far less.
    CHECK(sum_of(*db, runs[0].id, keys::kBytesSent) == sum_of(*db, runs[0].id, "bytes_dense"));
    CHECK(sum_of(*db, runs[1].id, keys::kBytesSent) < 0.05 * sum_of(*db, runs[1].id, "bytes_dense"));
    CHECK(runs[0].bytes_sent == sum_of(*db, runs[0].id, keys::kBytesSent));
  }

  auto listing = run_laconic(dir, "runs --db t.db");
  REQUIRE(listing.status == 0);
  CHECK_THAT(listing.out, Catch::Contains("compressor=topk,ratio=0.01,seed=1") && Catch::Contains("FINISHED") &&
                              Catch::Contains("test_acc"));

  auto report = run_laconic(dir, "report tiny --db t.db --out rep");
  INFO(report.err);
  REQUIRE(report.status == 0);
  const auto markdown = read_file(dir + "/rep/report.md");
  CHECK_THAT(markdown, Catch::Contains("| compressor=none,seed=1 | FINISHED |"));
  CHECK_THAT(markdown, Catch::Contains("| compressor=topk,ratio=0.01,seed=1 | FINISHED |"));
  CHECK_THAT(read_file(dir + "/rep/index.html"), Catch::Contains("compressor=topk,ratio=0.01"));

  // A second run with --resume finds both runs finished and trains nothing.
  auto again = run_laconic(dir, "run --resume tiny.lua --db t.db");
  REQUIRE(again.status == 0);
  CHECK_THAT(again.out, Catch::Contains("0 finished, 0 failed, 0 diverged, 2 skipped"));
  auto db = storage::Database::open_read_only(dir + "/t.db");
  CHECK(storage::list_runs(*db).size() == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a Lua syntax error prints file:line, exits non-zero and records nothing", "[cli][errors]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/bad.lua", "experiment {\n  name = \"bad\"\n  epochs = 2,\n}\n");
  auto r = run_laconic(dir, "run bad.lua --db t.db");
  CHECK(r.status != 0);
  // The comma missing at the end of line 2: Lua finds out on line 3, the message names line 2.
  CHECK_THAT(r.err, Catch::StartsWith("laconic: bad.lua:2: missing ',' after line 2? (Lua: '}' expected"));
  CHECK_FALSE(std::filesystem::exists(dir + "/t.db"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a Lua runtime error prints file:line, exits non-zero and records nothing", "[cli][errors]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/boom.lua", "local n = 1\nif n then\n  error(\"boom\")\nend\n");
  auto r = run_laconic(dir, "run boom.lua --db t.db");
  CHECK(r.status != 0);
  CHECK_THAT(r.err, Catch::Contains("boom.lua:3:") && Catch::Contains("boom"));
  CHECK_FALSE(std::filesystem::exists(dir + "/t.db"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("unknown names list the known ones", "[cli][errors]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/topo.lua", tiny_experiment("x", "  topology = allreduce { algorithm = \"tree\" },\n"));
  auto r = run_laconic(dir, "check topo.lua");
  CHECK(r.status != 0);
  CHECK_THAT(r.err, Catch::Contains("topo.lua:10:") && Catch::Contains("\"ring\"") && Catch::Contains("\"tree\""));

  write_file(dir + "/comp.lua", tiny_experiment("x", "  compressor = topK { ratio = 0.1 },\n"));
  r = run_laconic(dir, "check comp.lua");
  CHECK(r.status != 0);
  CHECK_THAT(r.err, Catch::Contains("comp.lua:10:") && Catch::Contains("'topK'") && Catch::Contains("topk") &&
                        Catch::Contains("none"));

  // A compressor that cannot be built for the model is refused before any worker starts.
  write_file(dir + "/scope.lua", tiny_experiment("x", "  compressor = powersgd { scope = \"layer\" },\n"));
  r = run_laconic(dir, "run scope.lua --db s.db");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("powersgd works layer by layer by itself"));
  CHECK_FALSE(std::filesystem::exists(dir + "/s.db"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a missing dataset names the Debian package that provides it", "[cli][errors]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/nodata.lua",
             "experiment {\n  name = \"x\",\n  data = fashion_mnist { root = \"/nonexistent\" },\n}\n");
  auto r = run_laconic(dir, "run nodata.lua --db t.db");
  CHECK(r.status != 0);
  CHECK_THAT(r.err, Catch::Contains("nodata.lua:") && Catch::Contains("while building dataset 'fashion_mnist'") &&
                        Catch::Contains("dataset-fashion-mnist") && Catch::Contains("/nonexistent"));
  CHECK_FALSE(std::filesystem::exists(dir + "/t.db"));
  // The files are looked for once --set has given data.root its value, so it can point elsewhere.
  CHECK(run_laconic(dir, "check nodata.lua --set data.root=/usr/share/datasets/fashion-mnist").status == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("--help shows every command and the defaults", "[cli][help]") {
  const auto dir = make_temp_dir();
  auto top = run_laconic(dir, "--help");
  CHECK(top.status == 0);
  for (const char* command : {"run", "runs", "report", "list", "check"}) CHECK_THAT(top.out, Catch::Contains(command));
  auto run = run_laconic(dir, "run --help");
  CHECK(run.status == 0);
  CHECK_THAT(run.out, Catch::Contains("--db") && Catch::Contains("laconic.db"));
  auto list = run_laconic(dir, "list compressors");
  CHECK(list.status == 0);
  CHECK_THAT(list.out, Catch::Contains("topk") && Catch::Contains("default 0.01"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the quickstart reaches test accuracy above 0.75 without compression in one epoch", "[cli][e2e][slow]") {
  const auto dir = make_temp_dir();
  const std::string quickstart = std::string(LACONIC_SOURCE_DIR) + "/experiments/quickstart.lua";
  auto run = run_laconic(dir, "run '" + quickstart + "' --db q.db", 900);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  auto db = storage::Database::open_read_only(dir + "/q.db");
  auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].name == "compressor=none,seed=1");
  CHECK(runs[0].status == storage::RunStatus::Finished);
  CHECK(runs[0].final_test_accuracy > 0.75);
  CHECK(runs[1].status == storage::RunStatus::Finished);
  // Top-k 1% sends about 2% of the dense bytes (index + value per kept entry).
  CHECK(runs[1].bytes_sent < 0.03 * runs[1].bytes_dense);
  std::filesystem::remove_all(dir);
}

TEST_CASE("every experiment file in experiments/ loads and expands", "[cli][experiments]") {
  const auto dir = make_temp_dir();
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(LACONIC_SOURCE_DIR) + "/experiments")) {
    if (entry.path().extension() != ".lua") continue;
    ++files;
    auto r = run_laconic(dir, "check '" + entry.path().string() + "'");
    INFO(entry.path() << "\n" << r.err);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains(" runs"));
  }
  CHECK(files >= 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("docs/dsl.md's component reference is what the registries say", "[cli][docs]") {
  const auto dir = make_temp_dir();
  const auto r = run_laconic(dir, "list --markdown");
  REQUIRE(r.status == 0);
  const std::string doc = read_file(std::string(LACONIC_SOURCE_DIR) + "/docs/dsl.md");
  const std::string begin = "<!-- BEGIN GENERATED: laconic list --markdown -->\n\n";
  const std::string end = "<!-- END GENERATED -->";
  const auto from = doc.find(begin), to = doc.find(end);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  INFO("regenerate with scripts/update-dsl-reference.py");
  CHECK(doc.substr(from + begin.size(), to - from - begin.size()) == r.out);
  // Every registered component appears (a sanity check of the generator itself).
  for (const char* name :
       {"`powersgd`", "`chain`", "`parameter_server`", "`stale_sync`", "`link`", "`step_decay`", "`fashion_mnist`"})
    CHECK_THAT(r.out, Catch::Contains(std::string("#### ") + name));
  std::filesystem::remove_all(dir);
}

TEST_CASE("--only selects runs by name; run --dry-run trains and records nothing", "[cli][only]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/s.lua", tiny_experiment("s",
                                             "  compressor = sweep { none(), topk { ratio = 0.1 }, "
                                             "topk { ratio = 0.01 } },\n  max_steps = 2,\n"));
  auto r = run_laconic(dir, "check s.lua --only ratio=0.1");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("3 runs, 1 matching 'ratio=0.1'") &&
                        Catch::Contains("2. compressor=topk,ratio=0.1,seed=1"));
  CHECK_THAT(r.out, !Catch::Contains("compressor=none"));

  r = run_laconic(dir, "run s.lua --dry-run --only topk --db d.db");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("2 matching 'topk'"));
  CHECK_FALSE(std::filesystem::exists(dir + "/d.db"));

  r = run_laconic(dir, "run s.lua --only nothing-like-this --db d.db");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("no run of 's.lua' has a name containing 'nothing-like-this'"));
  CHECK_FALSE(std::filesystem::exists(dir + "/d.db"));

  r = run_laconic(dir, "run s.lua --only ratio=0.01 --db d.db");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("[1/1] s compressor=topk,ratio=0.01,seed=1: FINISHED"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the file's lr_schedule and on_epoch_end functions run inside the workers", "[cli][callbacks]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/cb.lua", tiny_experiment("cb",
                                              "  max_steps = 2,\n  epochs = 4,\n"
                                              "  lr_schedule = function(epoch, step) return 0.01 * (epoch + 1) end,\n"
                                              "  on_epoch_end = function(ctx) return ctx.epoch >= 1 end,\n"));
  auto check = run_laconic(dir, "check cb.lua");
  CHECK_THAT(check.out, Catch::Contains("functions run in the workers: lr_schedule on_epoch_end"));
  auto run = run_laconic(dir, "run cb.lua --db t.db");
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  auto db = storage::Database::open_read_only(dir + "/t.db");
  const auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 1);
  // Stopped after epoch 1: 2 epochs x 2 steps on each of the 2 workers, the rate of each epoch.
  std::vector<double> lrs;
  for (const auto& m : storage::metrics_of(*db, runs[0].id, "lr"))
    if (m.worker == 0) lrs.push_back(m.value);
  CHECK(lrs == std::vector<double>{0.01, 0.01, 0.02, 0.02});
  CHECK(storage::metrics_of(*db, runs[0].id, "lr").size() == 8);
  CHECK(storage::metrics_of(*db, runs[0].id, "stopped_early").size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "tune runs every trial on the first seed, then the best trial of each configuration "
    "on every seed",
    "[cli][tune]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/t.lua",
             "experiment {\n  name = \"t\", batch_size = 32, workers = 2, timeout = 20,\n"
             "  max_steps = 3, eval_limit = 200, seeds = { 1, 2 },\n"
             "  optimizer = sgd { lr = log_uniform(1e-3, 1e-1) },\n"
             "  compressor = sweep { none(), topk { ratio = 0.1 } },\n"
             "  tune = { trials = 2, metric = \"test_loss\", goal = \"min\" },\n}\n");
  auto run = run_laconic(dir, "run t.lua --db t.db");
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.out, Catch::Contains("tuning test_loss (min) over 2 trials per configuration on "
                                      "seed 1"));
  auto db = storage::Database::open_read_only(dir + "/t.db");
  const auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 8);  // 2 configurations x 2 trials, then 2 x the best on 2 seeds
  // For each configuration, the final runs use the trial with the lowest final test loss.
  for (const std::string compressor : {"\"none\"", "\"topk\""}) {
    double best_loss = 1e300;
    std::string best_lr;
    std::vector<std::string> final_lrs;
    for (const auto& r : runs) {
      if (r.swept.find("\"compressor\":" + compressor) == std::string::npos) continue;
      const auto swept = nlohmann::json::parse(r.swept);
      const std::string lr = swept.at("optimizer.lr").dump();
      if (swept.at("tune") == "trial") {
        CHECK(r.seed == 1);
        const double loss = storage::summary_of(*db, r.id).at("test_loss").last;
        if (loss < best_loss) {
          best_loss = loss;
          best_lr = lr;
        }
      } else {
        CHECK(swept.at("tune") == "best");
        final_lrs.push_back(lr);
      }
    }
    CHECK(final_lrs == std::vector<std::string>{best_lr, best_lr});
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("diloco's outer optimizer is written with the optimizer constructors", "[cli][diloco]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/d.lua", tiny_experiment("d",
                                             "  max_steps = 6,\n"
                                             "  schedule = sweep { synchronous(), diloco { inner_steps = 3, "
                                             "outer = adam { lr = 0.01 } } },\n"));
  auto check = run_laconic(dir, "check d.lua --json");
  INFO(check.out << check.err);
  REQUIRE(check.status == 0);
  CHECK_THAT(check.out, Catch::Contains("\"outer\"") && Catch::Contains("\"adam\""));
  auto run = run_laconic(dir, "run d.lua --db d.db");
  INFO(run.out << run.err);
  CHECK(run.status == 0);
  CHECK_THAT(run.out, Catch::Contains("schedule=diloco,inner_steps=3,outer=adam{lr=0.01},seed=1: FINISHED"));

  write_file(dir + "/k.lua", tiny_experiment("k", "  schedule = diloco { outer = topk { ratio = 0.1 } },\n"));
  auto kind = run_laconic(dir, "check k.lua");
  CHECK(kind.status != 0);
  CHECK_THAT(kind.err, Catch::Contains("diloco.outer must be an optimizer, got compressor 'topk'"));
  write_file(dir + "/n.lua", tiny_experiment("n", "  schedule = diloco { outer = 0.7 },\n"));
  auto number = run_laconic(dir, "check n.lua");
  CHECK(number.status != 0);
  CHECK_THAT(number.err, Catch::Contains("diloco.outer must be a component of kind optimizer, got"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("diloco's outer rate may be the file's function of (epoch, step); the run's own may not", "[cli][diloco]") {
  // A function that returns 1 at every round trains exactly as the constant 1 (the same test
  // accuracy and bytes); one the function leaves at 0 would never move the weights.
  const auto dir = make_temp_dir();
  write_file(
      dir + "/f.lua",
      tiny_experiment("f",
                      "  max_steps = 6,\n"
                      "  schedule = sweep { diloco { inner_steps = 3, outer = sgd { lr = 1 } },\n"
                      "    diloco { inner_steps = 3, outer = sgd { lr = function(epoch, step) return 1 end } },\n"
                      "    diloco { inner_steps = 3, outer = sgd { lr = function(epoch, step) return 0 end } } },\n"));
  auto run = run_laconic(dir, "run f.lua --db f.db");
  INFO(run.out << run.err);
  CHECK(run.status != 0);  // the third run fails
  CHECK_THAT(run.out + run.err,
             Catch::Contains("diloco.outer.lr (a function) returned 0 at epoch 0, step 2; it must be > 0"));
  auto db = storage::Database::open_read_only(dir + "/f.db");
  const auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].status == storage::RunStatus::Finished);
  CHECK(runs[1].status == storage::RunStatus::Finished);
  CHECK(runs[2].status == storage::RunStatus::Failed);
  for (const char* key : {keys::kTestAccuracy, keys::kBytesSent}) {
    INFO(key);
    CHECK(sum_of(*db, runs[0].id, key) == sum_of(*db, runs[1].id, key));
  }
  CHECK(sum_of(*db, runs[0].id, keys::kTestAccuracy) > 0);

  write_file(dir + "/i.lua",
             tiny_experiment("i", "  optimizer = sgd { lr = function(epoch, step) return 0.1 end },\n"));
  auto inner = run_laconic(dir, "check i.lua");
  CHECK(inner.status != 0);
  CHECK_THAT(inner.err, Catch::Contains("sgd.lr is a function; the run's optimizer changes its rate with lr_schedule"));
  std::filesystem::remove_all(dir);
}
