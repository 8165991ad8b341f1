// `laconic advise` as a user runs it (docs/advise.md): from a directory of one's own, on a small
// experiment, it trains one probe per candidate at the asked workers (thread ranks) on the asked
// link, prints a ranked table, records the probes and their predictions, and reuses the probes
// when asked again; checked against full runs with --check; a wrong link or budget is refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/advise_command.hpp"
#include "cli_harness.hpp"
#include "engine/catalog.hpp"
#include "engine/core/layer_costs.hpp"
#include "lua/experiment.hpp"
#include "reports/format.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

// The report (and so the UI's experiment page, which shows its sections) has the advice table
// that `advise` printed as `out`.
void report_matches_advice(const std::string& dir, const std::string& out) {
  CommandResult r;
  r.out = out;
  const std::string first =
      r.out.substr(r.out.find("\n1 "), r.out.find('\n', r.out.find("\n1 ") + 1) - r.out.find("\n1 "));
  auto report = run_laconic(dir, "report adv-advise-w4-10Mbit-1ms --out rep --allow-missing-figures", 120);
  CHECK(report.status == 0);
  const std::string md = read_file(dir + "/rep/report.md");
  CHECK_THAT(md, Catch::Contains("## Advice"));
  const std::string candidate = r.out.find("\n1     none") != std::string::npos ? "| 1 | none |" : "| 1 | topk";
  CHECK_THAT(md, Catch::Contains(candidate));
  INFO(first);
  // Every ranked row of the report's table has the CLI's time to target on the CLI's row of that rank.
  for (std::size_t at = md.find("\n| 1 | ", md.find("## Advice")); at != std::string::npos;) {
    const std::size_t end = md.find('\n', at + 1);
    std::vector<std::string> cells;
    for (std::size_t c = md.find("| ", at); c < end; c = md.find("| ", c + 2)) {
      const std::size_t next = md.find(" |", c + 2);
      cells.push_back(md.substr(c + 2, next - c - 2));
    }
    REQUIRE(cells.size() >= 5);
    if (cells[0] == "-") break;  // the dropped rows
    const std::size_t line = r.out.find("\n" + cells[0] + " ");
    REQUIRE(line != std::string::npos);
    std::string time = cells[4];  // unescape report.md's brackets
    for (std::size_t b = time.find('\\'); b != std::string::npos; b = time.find('\\', b)) time.erase(b, 1);
    INFO("rank " << cells[0] << ": " << time);
    CHECK(r.out.substr(line, r.out.find('\n', line + 1) - line).find(time) != std::string::npos);
    at = md.find("\n| " + std::to_string(std::stoi(cells[0]) + 1) + " | ", end - 1);
  }
  CHECK(std::filesystem::exists(dir + "/rep/tables/advice.csv"));
  // 10Mbit,1ms names no cost per message on the hosts: the CLI and the report say so alike.
  const std::string wire_alone =
      "The messages are projected onto the wire alone, with no cost per message on the hosts";
  CHECK_THAT(r.out, Catch::Contains(wire_alone));
  CHECK_THAT(md, Catch::Contains(wire_alone));

}

// The same candidates trained in full (here: as processes, the link projected), then checked.
void check_against_full_runs(const std::string& dir) {
  auto r = run_laconic(dir, "run adv.lua --quiet --set name=full --set workers=4 --set eval_every=4", 300);
  REQUIRE(r.status == 0);
  r = run_laconic(
      dir, "advise adv.lua --workers 4 --link 10Mbit,1ms --placement threads --check full --json check.json", 120);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("against the full runs of 'full'") && Catch::Contains("step measured (s)"));
  CHECK_THAT(r.out, Catch::Contains("Median step error: "));
  // The same comparison as JSON: one figure, printed and written from one AdviceCheck.
  const auto check = nlohmann::json::parse(read_file(dir + "/check.json"));
  CHECK(check["full"] == "full");
  CHECK(check["workers"] == 4);
  REQUIRE(check["rows"].size() == 3);
  const std::string error = reports::fixed(check["median_step_error"].get<double>() * 100, 1);
  CHECK_THAT(r.out, Catch::Contains("Median step error: " + error + "%."));
  int baselines = 0;
  for (const auto& row : check["rows"]) {
    CHECK_THAT(r.out, Catch::Contains(row["candidate"].get<std::string>()));
    baselines += row["baseline"].get<bool>() ? 1 : 0;
  }
  CHECK(baselines == 1);
  r = run_laconic(dir, "advise adv.lua --workers 4 --link 10Mbit,1ms --placement threads --check nothing", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("nothing"));

}

}  // namespace

TEST_CASE("advise probes each candidate at N workers on the link and ranks them", "[cli][advise][slow]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/adv.lua",
             tiny_experiment("adv",
                             "  epochs = 2,\n  max_steps = 12,\n"
                             "  compressor = sweep { none(), topk { ratio = 0.05, error_feedback = true } },\n"));
  auto r =
      run_laconic(dir, "advise adv.lua --workers 4 --link 10Mbit,1ms --evaluations 6 --placement threads --quiet", 300);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("Target: test accuracy >= "));
  CHECK_THAT(r.out, Catch::Contains("step on 10Mbit,1ms (s)") && Catch::Contains("time to target on 10Mbit,1ms"));
  CHECK_THAT(r.out, Catch::Contains("\n1 ") && Catch::Contains("topk error_feedback=true ratio=0.05"));
  CHECK_THAT(r.out, Catch::Contains("of the 15min budget"));
  CHECK_THAT(r.out, Catch::Contains("experiment 'adv-advise-w4-10Mbit-1ms'"));
  CHECK_THAT(r.out, Catch::Contains("(3 seeds each;"));  // three by default, each with its interval

  auto db = storage::Database::open_read_only(dir + "/laconic.db");
  const auto runs = storage::list_runs(*db, {});
  REQUIRE(runs.size() == 6);
  for (const auto& run : runs) {
    INFO(run.name);
    CHECK(run.experiment == "adv-advise-w4-10Mbit-1ms");
    CHECK(run.status == storage::RunStatus::Finished);
    const auto facts = storage::facts_of(*db, run.id);
    const auto resolved = nlohmann::json::parse(facts.at("resolved"));
    CHECK(resolved["workers"] == 4);
    CHECK(resolved["placement"] == "threads");
    CHECK(resolved["link"]["bits_per_second"].get<double>() == Approx(1e7));
    if (facts.count("advice")) {  // a ranked candidate's prediction
      const auto advice = nlohmann::json::parse(facts.at("advice"));
      CHECK(advice["workers"] == 4);
      CHECK(advice["link"] == "10Mbit,1ms");
      CHECK(advice["time_to_target_seconds"].get<double>() > 0);
    }
  }
  db.reset();

  report_matches_advice(dir, r.out);

  // Asked again, the probes recorded are reused, not trained again.
  r = run_laconic(dir, "advise adv.lua --workers 4 --link 10Mbit,1ms --evaluations 6 --placement threads --quiet", 120);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("6 skipped"));
  // A candidate added to the file: only its probe trains.
  write_file(dir + "/adv.lua",
             tiny_experiment("adv",
                             "  epochs = 2,\n  max_steps = 12,\n"
                             "  compressor = sweep { none(), topk { ratio = 0.05, error_feedback = true }, "
                             "fp16() },\n"));
  r = run_laconic(dir, "advise adv.lua --workers 4 --link 10Mbit,1ms --evaluations 6 --placement threads --quiet", 300);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("9 runs, 3 finished") && Catch::Contains("6 skipped"));
  CHECK_THAT(r.out, Catch::Contains("fp16"));

  check_against_full_runs(dir);

  // A budget spent before any probe could finish (0 s, so whatever the machine): said so.
  r = run_laconic(dir, "advise adv.lua --workers 4 --link 1Gbit --placement threads --budget 0s --db small.db", 120);
  CHECK(r.status == 1);
  CHECK_THAT(r.out, Catch::Contains("of the 0s budget (spent"));
  CHECK_THAT(r.err, Catch::Contains("no probe finished within the budget (--budget 0s)"));
  CHECK_THAT(r.out, !Catch::Contains("laconic run --resume"));  // asked again, advise continues them itself
  {
    auto small = storage::Database::open_read_only(dir + "/small.db");
    const auto stopped = storage::list_runs(*small, {});
    REQUIRE_FALSE(stopped.empty());
    CHECK_THAT(stopped.front().error, Catch::Contains("its --budget was spent"));
  }

  r = run_laconic(dir, "advise adv.lua --workers 4 --link fast", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("fast"));
  r = run_laconic(dir, "advise adv.lua --workers 4 --link 1Gbit --budget soon", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--budget"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("advise places its probes as processes where the host has a core per worker, and names them so",
          "[cli][advise]") {
  CHECK(advise::probe_placement("auto", 2, 2) == RankPlacement::Processes);
  CHECK(advise::probe_placement("auto", 16, 2) == RankPlacement::Threads);
  CHECK(advise::probe_placement("threads", 1, 8) == RankPlacement::Threads);
  CHECK(advise::probe_placement("processes", 16, 2) == RankPlacement::Processes);
  CHECK_THROWS_WITH(advise::probe_placement("gpus", 2, 2), Catch::Contains("auto, threads or processes"));
  CHECK(advise::advise_experiment_name("e", 16, "100Mbit,1ms", RankPlacement::Threads) == "e-advise-w16-100Mbit-1ms");
  CHECK(advise::advise_experiment_name("e", 2, "1Gbit", RankPlacement::Processes) == "e-advise-w2-1Gbit-processes");
  CHECK(advise::parse_budget("15min") == 900);
  CHECK(advise::parse_budget("0.5h") == 1800);
  CHECK(advise::parse_budget("90s") == 90);
  // Minutes as `--help`'s default writes them, and as users write them.
  CHECK(advise::parse_budget("6m") == 360);
  CHECK(advise::parse_budget("6min") == 360);
  CHECK(advise::parse_budget("2h") == 7200);
  // Said once the first probe has finished: 24 probes at 32 s each are about 13 min, past 6m.
  CHECK_THAT(advise::budget_forecast(24, 1, 0, 32, 360, "6m"),
             Catch::StartsWith("the 24 probes would take about 12.8 min at the pace of the first (32 s each), "
                               "past the 6m budget") && Catch::Contains("--seeds 1"));
  CHECK(advise::budget_forecast(24, 1, 0, 32, 900, "15min").empty());  // fits
  CHECK(advise::budget_forecast(24, 3, 3, 32, 360, "6m").empty());     // none trained yet by this advise
  CHECK_THROWS_WITH(advise::parse_budget("soonmin"), Catch::Contains("--budget"));
}

TEST_CASE("advise trains its probes seed by seed, the baseline's first in each round", "[cli][advise]") {
  const auto dir = make_temp_dir();
  // The baseline listed last, two seeds: the plan's order is candidate by candidate.
  write_file(dir + "/order.lua", tiny_experiment("order",
                                                 "  compressor = sweep { fp16(), qsgd { levels = 4 }, none() },\n"
                                                 "  seeds = { 1, 2 },\n"));
  const engine::EngineCatalog catalog;
  std::vector<RunConfig> runs = lua::load_experiment(dir + "/order.lua", catalog, {}).runs;
  REQUIRE(runs.size() == 6);
  std::stable_sort(runs.begin(), runs.end(),
                   [](const RunConfig& a, const RunConfig& b) { return advise::probe_order(a) < advise::probe_order(b); });
  std::vector<std::string> order;
  for (const RunConfig& run : runs) order.push_back(run.name);
  CHECK(order == std::vector<std::string>{"compressor=none,seed=1", "compressor=fp16,seed=1",
                                          "compressor=qsgd,levels=4,seed=1", "compressor=none,seed=2",
                                          "compressor=fp16,seed=2", "compressor=qsgd,levels=4,seed=2"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("advise on a file that sweeps optimizers ranks them, one that compresses as a candidate", "[cli][advise]") {
  // 1-bit Adam on LeNet-5 diverges at its first 1-bit step (a ReLU unit that rarely fires has a
  // tiny frozen variance, and its 1-bit momentum is the layer's scale): a diverged probe is said
  // to be one, not "not probed".
  const auto dir = make_temp_dir();
  write_file(dir + "/opt.lua", tiny_experiment("opt", "  epochs = 1,\n  max_steps = 30,\n"
                                                      "  optimizer = sweep { adamw { lr = 1e-3 }, demo { lr = 1e-3 },\n"
                                                      "                      onebit_adam { lr = 1e-3, warmup_steps = 20 } },\n"));
  auto r = run_laconic(dir, "advise opt.lua --workers 2 --link 100Mbit --evaluations 2 --placement threads --seeds 1", 300);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, !Catch::Contains("default candidates"));
  auto db = storage::Database::open_read_only(dir + "/laconic.db");
  std::set<std::string> optimizers;
  for (const auto& run : storage::list_runs(*db, {})) optimizers.insert(run.name.substr(0, run.name.find(',')));
  CHECK(optimizers == std::set<std::string>{"optimizer=adamw", "optimizer=demo", "optimizer=onebit_adam"});
  // adamw, the dense one, is the baseline; DeMo a candidate beside it.
  CHECK_THAT(r.out, Catch::Contains("baseline"));
  CHECK_THAT(r.out, Catch::Contains("optimizer=demo"));
  CHECK_THAT(r.err, Catch::Contains("1 diverged (not ranked; laconic show ID says where): optimizer=onebit_adam"));
  CHECK_THAT(r.err, !Catch::Contains("not probed"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("advise on a file that sweeps no compressor probes the default candidates", "[cli][advise]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/one.lua", tiny_experiment("one", "  epochs = 1,\n  max_steps = 4,\n"));
  auto r =
      run_laconic(dir, "advise one.lua --workers 2 --link 100Mbit --evaluations 2 --placement threads --seeds 1", 300);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("sweeps no compressor, optimizer or schedule; advising on the default candidates: "
                                    "sweep{none(), fp16()"));
  auto db = storage::Database::open_read_only(dir + "/laconic.db");
  std::set<std::string> compressors;
  for (const auto& run : storage::list_runs(*db, {})) compressors.insert(run.name.substr(0, run.name.find(',')));
  CHECK(compressors == std::set<std::string>{"compressor=none", "compressor=fp16", "compressor=topk",
                                             "compressor=powersgd", "compressor=qsgd", "compressor=ef_signsgd"});
  // Each candidate that sends a payload measured layer by layer (the fact layer_costs): the
  // model's layers, each with the payload its compressor sends for that layer alone.
  for (const auto& run : storage::list_runs(*db, {})) {
    INFO(run.name);
    const auto facts = storage::facts_of(*db, run.id);
    const bool measured = facts.count(LayerCodecCosts::kFact) > 0;
    const bool payload = !run.name.starts_with("compressor=none") && !run.name.starts_with("compressor=powersgd");
    CHECK(measured == payload);
    if (!measured) continue;
    const LayerCodecCosts costs = LayerCodecCosts::from_json_text(facts.at(LayerCodecCosts::kFact));
    REQUIRE_FALSE(costs.layers.empty());
    if (run.name.starts_with("compressor=topk"))  // ratio 0.01: 8 + 8 ceil(n / 100) bytes
      for (const auto& layer : costs.layers) CHECK(layer.payload_bytes == 8 + 8 * ((layer.elements + 99) / 100));
  }
  db.reset();
  // The report says the same as the command about which layers to leave dense.
  REQUIRE(run_laconic(dir, "report one-advise-w2-100Mbit --out rep --allow-missing-figures", 120).status == 0);
  const std::string md = read_file(dir + "/rep/report.md");
  std::size_t from = r.out.find("Which layers to leave dense (");
  for (from = r.out.find("\n- ", from); from != std::string::npos; from = r.out.find("\n- ", from + 1)) {
    const std::string line = r.out.substr(from + 1, r.out.find('\n', from + 1) - from - 1);
    CHECK_THAT(md, Catch::Contains(line.substr(2, 40)));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("advise drops a probe that falls behind while it trains, and only that one", "[cli][advise][slow]") {
  const auto dir = make_temp_dir();
  // Top-k of 0.01% without error feedback barely learns; Top-k 5% with it keeps up with dense.
  // The baseline listed last: advise probes it first, since dropping measures against it.
  write_file(dir + "/drop.lua", tiny_experiment("drop",
                                                "  epochs = 4,\n  max_steps = 600,\n"
                                                "  compressor = sweep { topk { ratio = 0.05, error_feedback = true }, "
                                                "topk { ratio = 0.0001, error_feedback = false }, none() },\n"));
  auto r = run_laconic(dir, "advise drop.lua --workers 4 --link 10Mbit,1ms --placement threads --quiet --seeds 1", 600);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("dropped while its probe trained: after "));
  auto db = storage::Database::open_read_only(dir + "/laconic.db");
  std::map<std::string, std::size_t> steps;
  std::map<std::string, std::string> dropped;
  for (const auto& run : storage::list_runs(*db, {})) {
    INFO(run.name);
    CHECK(run.status == storage::RunStatus::Finished);  // a result, ended early
    steps[run.name] = storage::metrics_of(*db, run.id, "train_loss").size();
    const auto facts = storage::facts_of(*db, run.id);
    if (facts.count("dropped")) dropped[run.name] = facts.at("dropped");
  }
  const auto runs = storage::list_runs(*db, {});
  const auto baseline = std::find_if(
      runs.begin(), runs.end(), [](const storage::RunRow& run) { return run.name.starts_with("compressor=none"); });
  REQUIRE(baseline != runs.end());
  for (const auto& run : runs)
    if (run.id != baseline->id) CHECK(baseline->ended <= run.started);
  REQUIRE(dropped.size() == 1);
  const std::string slow = dropped.begin()->first;
  CHECK_THAT(slow, Catch::Contains("ratio=0.0001"));
  CHECK_THAT(dropped.begin()->second, Catch::Contains("as much left to learn as the baseline at that step"));
  for (const auto& [name, count] : steps)
    if (name != slow) CHECK(steps.at(slow) < count);  // it stopped before its probe's end
  db.reset();
  // Asked again: the dropped probe is a result, not trained again.
  r = run_laconic(dir, "advise drop.lua --workers 4 --link 10Mbit,1ms --placement threads --quiet --seeds 1", 120);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("3 skipped"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("an interrupted advise exits non-zero, names the probes it did not run and how to finish them",
          "[cli][advise]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/int.lua",
             tiny_experiment("int", "  epochs = 1,\n  max_steps = 40,\n"
                                    "  compressor = sweep { none(), topk { ratio = 0.05 }, fp16(), qsgd() },\n"));
  const pid_t pid = start_laconic(dir, {"advise", "int.lua", "--workers", "2", "--link", "100Mbit", "--evaluations",
                                        "2", "--placement", "threads", "--seeds", "1"});
  REQUIRE(pid > 0);
  // SIGTERM once the first probe has finished, while the others are still to come.
  bool one_finished = false;
  for (int i = 0; i < 1200 && !one_finished; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!std::filesystem::exists(dir + "/laconic.db")) continue;
    try {
      auto db = storage::Database::open_read_only(dir + "/laconic.db");
      for (const auto& run : storage::list_runs(*db, {}))
        one_finished = one_finished || run.status == storage::RunStatus::Finished;
    } catch (const std::exception&) {  // the controller still creating it
    }
  }
  REQUIRE(one_finished);
  ::kill(pid, SIGTERM);
  const auto status = wait_for_exit(pid, 120);
  REQUIRE(status.has_value());
  const std::string out = read_file(dir + "/.stdout"), err = read_file(dir + "/.stderr");
  INFO(out << err);
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) != 0);
  CHECK_THAT(err, Catch::Contains("laconic advise: interrupted (Ctrl-C or SIGTERM): the table ranks only the probes "
                                  "that finished;") &&
                      Catch::Contains("not probed: ") && Catch::Contains("compressor=qsgd") &&
                      Catch::Contains("run the same command again to finish them"));
  std::filesystem::remove_all(dir);
}
