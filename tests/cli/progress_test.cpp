// `laconic run` as a batch job sees it: output to a log file, progress lines per evaluation and
// on a timer, estimates of the time left, --quiet; eval_every; the facts a run records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

std::vector<std::string> lines_containing(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("a run whose output goes to a log prints a line per evaluation with the time left", "[cli][progress]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/p.lua", tiny_experiment("p",
                                             "  max_steps = 30,\n  epochs = 2,\n  eval_every = 20,\n"
                                             "  compressor = sweep { none(), topk { ratio = 0.01 } },\n"));
  // stdout and stderr go to files: not a terminal, so the log form.
  auto r = run_laconic(dir, "run p.lua --db p.db --progress-every 0.3");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(lines_containing(r.out, ": started").size() == 2);
  // Per run: evaluations after steps 20 and 40, and at the end of each of the 2 epochs of 30.
  const auto evaluations = lines_containing(r.out, "test_accuracy ");
  CHECK(evaluations.size() == 8);
  for (const auto& line : evaluations) {
    CHECK_THAT(line, Catch::Contains(" epoch ") && Catch::Contains(" step ") && Catch::Contains(" loss ") &&
                         Catch::Contains(" steps/s") && Catch::Contains("left: run ") && Catch::Contains(", sweep "));
  }
  CHECK_THAT(evaluations.front(), Catch::StartsWith("[1/2] p compressor=none,seed=1  epoch 1/2  step 20/30"));
  CHECK_THAT(evaluations.back(), Catch::StartsWith("[2/2] p compressor=topk,ratio=0.01,seed=1  epoch 2/2  step 30/30"));
  // The second run's estimate of the sweep comes from the first run's wall time: never unknown.
  for (const auto& line : lines_containing(r.out, "[2/2]"))
    if (line.find("left:") != std::string::npos) CHECK(line.find("sweep ?") == std::string::npos);
  CHECK(r.out.find('\r') == std::string::npos);  // no terminal redraws in a log
  CHECK(r.out.find("\033[") == std::string::npos);

  // eval_every = 20 with 30 steps per epoch: evaluations after steps 20, 30 (epoch end), 40, 60.
  auto db = storage::Database::open_read_only(dir + "/p.db");
  const auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 2);
  std::vector<std::int64_t> steps;
  for (const auto& m : storage::metrics_of(*db, runs[0].id, "test_accuracy")) steps.push_back(m.step + 1);
  CHECK(steps == std::vector<std::int64_t>{20, 30, 40, 60});
  CHECK(storage::epochs_of(*db, runs[0].id).size() == 2);

  // Each run says how its ranks computed: one thread each, and which BLAS library.
  const auto facts = storage::facts_of(*db, runs[0].id);
  CHECK(facts.at("torch_threads") == "1");
  CHECK(facts.at("torch_interop_threads") == "1");
  CHECK(facts.count("blas_library") == 1);
  if (facts.at("blas_library").find("openblas") != std::string::npos) CHECK(facts.at("blas_threads") == "1");
  CHECK(facts.at("ranks_on_host") == "2");
  CHECK(facts.count("cores") == 1);
  CHECK(facts.count("load_start") == 1);
  CHECK(facts.count("load_end") == 1);
  // Where the run's time went (the seconds_* facts): every phase rank 0 went through, and the
  // controller's part. The first run read the data; the second found it in memory.
  for (const char* phase :
       {"seconds_starting", "seconds_rendezvous", "seconds_loading", "seconds_training", "seconds_evaluating",
        "seconds_finishing", "seconds_process_start", "seconds_teardown", "seconds_launch", "seconds_preload"}) {
    INFO(phase);
    REQUIRE(facts.count(phase) == 1);
    CHECK(std::stod(facts.at(phase)) >= 0);
  }
  CHECK(std::stod(facts.at("seconds_launch")) >= std::stod(facts.at("seconds_training")));
  const auto second = storage::facts_of(*db, runs[1].id);
  REQUIRE(second.count("seconds_preload") == 1);
  CHECK(std::stod(second.at("seconds_preload")) < std::stod(facts.at("seconds_preload")));
  auto show = run_laconic(dir, "show " + std::to_string(runs[0].id) + " --db p.db", 60);
  CHECK_THAT(show.out, Catch::Contains("torch_threads") && Catch::Contains("blas_library"));

  // --quiet: the result lines only.
  r = run_laconic(dir, "run p.lua --db q.db --quiet");
  REQUIRE(r.status == 0);
  CHECK(lines_containing(r.out, ": started").empty());
  CHECK(lines_containing(r.out, "left:").empty());
  CHECK(lines_containing(r.out, ": FINISHED").size() == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a long stretch without an evaluation still prints a line every --progress-every seconds",
          "[cli][progress]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/long.lua", tiny_experiment("long", "  max_steps = 600,\n"));
  auto r = run_laconic(dir, "run long.lua --db l.db --progress-every 0.1");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  // Rank 0 reports twice a second (600 steps take a few seconds here); each report after 0.1 s
  // without a line becomes one.
  std::size_t timed = 0;
  for (const auto& line : lines_containing(r.out, " steps/s")) timed += line.find("test_accuracy") == std::string::npos;
  CHECK(timed >= 1);
  CHECK(lines_containing(r.out, "test_accuracy ").size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("check lists names, names only, or the resolved configurations as JSON", "[cli][check]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/c.lua", tiny_experiment("c", "  compressor = sweep { none(), topk { ratio = 0.1 } },\n"));
  auto r = run_laconic(dir, "check c.lua --names", 60);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == "compressor=none,seed=1\ncompressor=topk,ratio=0.1,seed=1\n");
  r = run_laconic(dir, "check c.lua --json", 60);
  REQUIRE(r.status == 0);
  const auto json = nlohmann::json::parse(r.out);
  REQUIRE(json.size() == 2);
  CHECK(json[1]["index"] == 2);
  CHECK(json[1]["name"] == "compressor=topk,ratio=0.1,seed=1");
  CHECK(json[1]["config"]["compressor"]["ratio"].get<double>() == 0.1);
  r = run_laconic(dir, "check c.lua", 60);
  CHECK_THAT(r.out, Catch::Contains("2. compressor=topk,ratio=0.1,seed=1  (2 workers, 1 epoch)"));
  CHECK(r.out.find("\"ratio\"") == std::string::npos);  // no JSON unless asked
  r = run_laconic(dir, "check c.lua --names --json", 60);
  CHECK(r.status == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a model that does not fit its dataset names the field to change and where it was written", "[cli][errors]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/fit.lua",
             "experiment {\n  name = \"fit\",\n  data = fashion_mnist(),\n"
             "  model = mlp { sizes = {784, 100} },\n}\n");
  auto r = run_laconic(dir, "check fit.lua", 60);
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::StartsWith("laconic: fit.lua:4: run 1 (seed=1): model mlp has 100 outputs but dataset "
                                      "fashion_mnist has 10 classes: set the last entry of mlp.sizes to 10 "
                                      "(sizes = {784, 10})"));
  CHECK(r.err.find("mlp.classes") == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a run with more ranks than cores is warned about, recorded and listed as oversubscribed",
          "[cli][progress][facts]") {
  const auto dir = make_temp_dir();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  write_file(dir + "/o.lua", tiny_experiment("o", "  max_steps = 3,\n"));
  // tiny_experiment has 2 workers; a second file asks for one rank more than the cores.
  std::string crowded = tiny_experiment("crowded", "  max_steps = 3,\n");
  crowded.replace(crowded.find("workers = 2"), 11, "workers = " + std::to_string(cores + 1));
  write_file(dir + "/c.lua", crowded);
  auto r = run_laconic(dir, "run c.lua --db o.db");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("warning: " + std::to_string(cores + 1) + " ranks on " + std::to_string(cores) +
                                    " cores"));
  if (cores >= 2) REQUIRE(run_laconic(dir, "run o.lua --db o.db --quiet").status == 0);
  auto db = storage::Database::open_read_only(dir + "/o.db");
  const auto runs = storage::list_runs(*db);
  CHECK(storage::facts_of(*db, runs[0].id).at("oversubscribed") == "true");
  r = run_laconic(dir, "runs --wide --db o.db", 60);
  CHECK_THAT(r.out, Catch::Contains("oversubscribed"));
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);  // header
  std::getline(lines, line);
  CHECK_THAT(line, Catch::Contains("crowded") && Catch::Contains(" yes "));
  if (cores >= 2) {
    std::getline(lines, line);
    CHECK_THAT(line, Catch::Contains(" o ") && Catch::Contains(" no "));
  }
  std::filesystem::remove_all(dir);
}
