// churn = script { events = "leave 3 at 4; join 3 at 8" } end to end (issue 68, the first part):
// the absent worker records nothing for the steps it missed and nothing twice, the others sum
// around a ring of three meanwhile, worker 0 hands the joiner its state, the same bits under
// process ranks as under thread ranks, and the steps before the first change as in the calm run.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "cli_harness.hpp"
#include "engine/core/units.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/statement.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

std::string churn_experiment(const std::string& churn, const std::string& schedule = "synchronous()") {
  return "experiment {\n"
         "  name = \"churn\",\n"
         "  data = synthetic { shape = {1, 8, 8}, n = 2048, test_n = 64 },\n"
         "  model = mlp { sizes = {64, 64, 10} },\n"
         "  optimizer = sgd { lr = 0.1, momentum = 0.9 },\n"
         "  batch_size = 16, workers = 4, max_steps = 12, eval_limit = 64, timeout = 30,\n"
         "  schedule = " +
         schedule +
         ",\n"
         "  churn = " +
         churn +
         ",\n"
         "  placement = sweep { processes(), threads() },\n"
         "}\n";
}

// (run name, key, step, worker) -> value, and how many rows each had.
struct Rows {
  std::map<std::tuple<std::string, std::string, std::int64_t, std::int64_t>, double> value;
  std::map<std::tuple<std::string, std::string, std::int64_t, std::int64_t>, int> count;
};

Rows rows_of(const std::string& path) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement q(db->handle(),
                       "SELECT r.name, m.key, m.step, m.worker, m.value FROM metrics m JOIN runs r ON r.id = m.run_id");
  Rows out;
  while (q.step()) {
    const auto key = std::tuple{q.column_text(0), q.column_text(1), q.column_int64(2), q.column_int64(3)};
    out.value[key] = q.column_double(4);
    ++out.count[key];
  }
  return out;
}

// The runs of a sweep of a copied join against one of join state `state`, under processes and
// threads: "copied, processes", "STATE, threads", ... -> run name.
std::map<std::string, std::string> runs_by_join_state(const Rows& rows, const std::string& state) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : rows.value) {
    const std::string& name = std::get<0>(key);
    const std::string taken = name.find(state) != std::string::npos ? state : "copied";
    out[taken + (name.find("threads") != std::string::npos ? ", threads" : ", processes")] = name;
  }
  return out;
}

}  // namespace

TEST_CASE(
    "a worker leaves and joins by script: rows for the steps it trained, a ring of three meanwhile, the "
    "same bits as processes and threads",
    "[cli][e2e][churn]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/c.lua", churn_experiment("sweep { calm(), script { events = \"leave 3 at 4; join 3 at 8\" } }"));
  const auto run = run_laconic(dir, "run c.lua --db c.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const Rows rows = rows_of(dir + "/c.db");
  const std::string churn_p = "churn=script,events=leave 3 at 4; join 3 at 8,placement=processes,seed=1";
  const std::string churn_t = "churn=script,events=leave 3 at 4; join 3 at 8,placement=threads,seed=1";
  const std::string calm_p = "churn=calm,placement=processes,seed=1";
  for (const auto& [key, n] : rows.count) CHECK(n == 1);  // nothing twice
  const auto has = [&](const std::string& run, const char* key, std::int64_t step, std::int64_t worker) {
    return rows.value.count({run, key, step, worker}) == 1;
  };
  const auto at = [&](const std::string& run, const char* key, std::int64_t step, std::int64_t worker) {
    return rows.value.at({run, key, step, worker});
  };
  for (const std::string& name : {churn_p, churn_t}) {
    INFO(name);
    for (std::int64_t step = 0; step < 12; ++step)
      for (std::int64_t worker = 0; worker < 4; ++worker) {
        const bool absent = worker == 3 && step >= 4 && step < 8;
        CHECK(has(name, "train_loss", step, worker) == !absent);
        CHECK(has(name, "bytes_sent", step, worker) == !absent);
      }
    // Its epoch's mean loss is over the steps it trained.
    double sum = 0;
    for (std::int64_t step : {0, 1, 2, 3, 8, 9, 10, 11}) sum += at(name, "train_loss", step, 3);
    CHECK(at(name, "epoch_train_loss", 11, 3) == Approx(sum / 8).epsilon(1e-12));
    CHECK(at(name, "members", 4, 0) == 3);
    CHECK(at(name, "members", 8, 0) == 4);
    CHECK(!has(name, "members", 5, 0));
    CHECK(at(name, "join_bytes", 8, 0) > 4 * 4810);  // the MLP's 4,810 weights and their momentum
    // The hand-over is counted in its step like an exchange: step 9 exchanges as step 8 did, among
    // the same four, so the difference is the state worker 0 sent (the size, then the state) and
    // worker 3 received, and its projection onto the link.
    const double join = at(name, "join_bytes", 8, 0);
    CHECK(at(name, "bytes_sent", 8, 0) - at(name, "bytes_sent", 9, 0) == join);
    CHECK(at(name, "bytes_received", 8, 3) - at(name, "bytes_received", 9, 3) == join);
    CHECK(at(name, "messages", 8, 0) - at(name, "messages", 9, 0) == 2);
    CHECK(at(name, "projected_time_communicate", 8, 0) - at(name, "projected_time_communicate", 9, 0) ==
          Approx(2 * 50e-6 + 8 * join / (1e9 * kTcpPayloadFraction)).epsilon(1e-6));
    // Three workers sum around a ring of three: 2 x 2/3 of the gradient, against 2 x 3/4 of it.
    CHECK(at(name, "bytes_sent", 5, 0) / at(name, "bytes_sent", 2, 0) == Approx((4.0 / 3) / (6.0 / 4)).epsilon(0.01));
  }
  // The same bits under processes as under threads; the calm run's before the first change.
  for (const auto& [key, value] : rows.value) {
    const auto& [name, metric, step, worker] = key;
    if (name != churn_p || (metric != "train_loss" && metric != "bytes_sent")) continue;
    CHECK(value == at(churn_t, metric.c_str(), step, worker));
    if (step < 4) CHECK(value == at(calm_p, metric.c_str(), step, worker));
  }
  // The report's churn tables say what the rows say: the changes, the bytes handed over and their
  // projection onto the runs' 1 Gbit/s link (two messages of 50 us each and the bytes at the
  // payload rate), the calm twin's test accuracy.
  const auto report = run_laconic(dir, "report churn --db c.db --out rep", 300);
  INFO(report.out << report.err);
  REQUIRE(report.status == 0);
  const auto changes = csv_rows(dir + "/rep/tables/churn_changes.csv");
  REQUIRE(changes.size() == 5);  // the header, two changes for each placement
  CHECK(changes[0] == std::vector<std::string>{"run", "step", "left", "joined", "members", "join_bytes", "join_seconds",
                                               "join_projected_seconds", "detect_seconds", "regroup_seconds"});
  for (std::size_t i = 1; i < changes.size(); ++i) {
    const auto& c = changes[i];
    INFO(c[0] << " " << c[1]);
    CHECK(c[8].empty());  // an elastic run's alone
    CHECK(c[9].empty());
    const std::int64_t step = std::stoll(c[1]);
    CHECK(step == (c[2] == "3" ? 4 : 8));
    CHECK(c[c[2] == "3" ? 3 : 2].empty());
    CHECK(std::stod(c[4]) == at(c[0], "members", step, 0));
    if (step == 8) {
      const double bytes = at(c[0], "join_bytes", step, 0);
      CHECK(std::stod(c[5]) == bytes);
      CHECK(std::stod(c[6]) == Approx(at(c[0], "join_seconds", step, 0)).epsilon(1e-6));
      CHECK(std::stod(c[7]) == Approx(2 * 50e-6 + 8 * bytes / (1e9 * kTcpPayloadFraction)).epsilon(1e-6));
    }
  }
  const auto summary = csv_rows(dir + "/rep/tables/churn.csv");
  REQUIRE(summary.size() == 3);
  for (std::size_t i = 1; i < summary.size(); ++i) {
    const bool threads = summary[i][0] == churn_t;
    CHECK((threads || summary[i][0] == churn_p));
    CHECK(summary[i][1] == "1");  // leaves
    CHECK(summary[i][2] == "1");  // joins
    CHECK(summary[i][3] == "3");  // fewest present
    const std::string calm = threads ? "churn=calm,placement=threads,seed=1" : calm_p;
    CHECK(std::stod(summary[i][8]) == Approx(at(calm, "test_accuracy", 11, 0)).epsilon(1e-9));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("churn is refused where it cannot run yet, with the reason", "[cli][churn]") {
  const std::string dir = make_temp_dir();
  const auto refused = [&](const std::string& file) {
    write_file(dir + "/r.lua", file);
    const auto out = run_laconic(dir, "check r.lua", 120);
    CHECK(out.status != 0);
    return out.out + out.err;
  };
  CHECK_THAT(refused(churn_experiment("script { events = \"leave 0 at 4\" }")), Catch::Contains("worker 0 stays"));
  CHECK_THAT(refused(churn_experiment("script { events = \"leave 5 at 4\" }")),
             Catch::Contains("rank 5 cannot leave a run of 4 workers"));
  CHECK_THAT(refused(churn_experiment("script { events = \"join 2 at 4\" }")), Catch::Contains("it is present then"));
  CHECK_THAT(refused(churn_experiment("script { events = \"leave 2 on 4\" }")),
             Catch::Contains("each change is \"leave RANKS at STEP\""));
  CHECK_THAT(
      refused(churn_experiment("script { events = \"leave 2 at 4\" }", "diloco { inner_steps = 4, fragments = 2 }")),
      Catch::Contains("not Streaming DiLoCo"));
  std::string update = churn_experiment("script { events = \"leave 2 at 4\" }");
  update.insert(update.rfind('}'), "  churn_batch = \"global\", exchange = \"update\",\n");
  CHECK_THAT(refused(update), Catch::Contains("not with exchange = \"update\""));
  std::filesystem::remove_all(dir);
}

TEST_CASE("churn as a list of leave and join changes is the script they spell", "[cli][churn]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/l.lua",
             churn_experiment("{ join { ranks = { 3 }, step = 8 }, leave { ranks = { 3 }, step = 4 } }"));
  const auto check = run_laconic(dir, "check l.lua --json", 120);
  INFO(check.out << check.err);
  REQUIRE(check.status == 0);
  const auto runs = nlohmann::json::parse(check.out);
  REQUIRE(runs.size() == 2);  // the placement sweep
  CHECK(runs[0]["config"]["churn"]["name"] == "script");
  CHECK(runs[0]["config"]["churn"]["events"] == "leave 3 at 4; join 3 at 8");
  write_file(dir + "/bad.lua", churn_experiment("{ leave { ranks = { 3 }, step = 4 }, calm() }"));
  const auto bad = run_laconic(dir, "check bad.lua", 120);
  CHECK(bad.status != 0);
  CHECK_THAT(bad.err, Catch::Contains("bad.lua:8: experiment field 'churn': churn = { ... } lists changes"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("random churn: the changes drawn are recorded, rows match them, the same bits as processes and threads",
          "[cli][e2e][churn]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/r.lua", churn_experiment("random { leave_rate = 0.15, mean_downtime = 3 }"));
  const auto run = run_laconic(dir, "run r.lua --db r.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const Rows rows = rows_of(dir + "/r.db");
  for (const auto& [key, n] : rows.count) CHECK(n == 1);
  const std::string procs = "placement=processes,seed=1", threads = "placement=threads,seed=1";
  for (const std::string& name : {procs, threads}) {
    INFO(name);
    // Walk the recorded changes: a worker has a loss row exactly at the steps it was present.
    std::vector<bool> present(4, true);
    int changes = 0;
    for (std::int64_t step = 0; step < 12; ++step) {
      for (std::int64_t worker = 1; worker < 4; ++worker)
        if (const auto c = rows.value.find({name, "member_change", step, worker}); c != rows.value.end()) {
          CHECK(present[worker] == (c->second < 0));
          present[worker] = c->second > 0;
          ++changes;
        }
      for (std::int64_t worker = 0; worker < 4; ++worker)
        CHECK(rows.value.count({name, "train_loss", step, worker}) == (present[worker] ? 1U : 0U));
    }
    CHECK(changes >= 2);  // seed 1 draws leaves and joins within 12 steps at this rate
  }
  for (const auto& [key, value] : rows.value) {
    const auto& [name, metric, step, worker] = key;
    if (name == procs && (metric == "train_loss" || metric == "bytes_sent" || metric == "member_change"))
      CHECK(value == rows.value.at({threads, metric, step, worker}));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "churn_batch = \"global\": the workers present train on every worker's examples, the same bits as "
    "processes and threads",
    "[cli][e2e][churn]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/g.lua", churn_experiment("random { leave_rate = 0.15, mean_downtime = 3 }"));
  const auto run = run_laconic(dir, "run g.lua --db g.db --quiet --set churn_batch=global", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const Rows rows = rows_of(dir + "/g.db");
  const std::string procs = "churn_batch=global,placement=processes,seed=1";
  const std::string threads = "churn_batch=global,placement=threads,seed=1";
  std::map<std::int64_t, double> examples;  // per step, over the workers present
  int shared_steps = 0;
  for (const auto& [key, value] : rows.value) {
    const auto& [name, metric, step, worker] = key;
    if (name != procs) continue;
    if (metric == "train_loss" || metric == "examples" || metric == "bytes_sent")
      CHECK(value == rows.value.at({threads, metric, step, worker}));
    if (metric == "examples") examples[step] += value;
    if (metric == "examples" && value > 16) ++shared_steps;
  }
  CHECK(examples.size() == 12);
  for (const auto& [step, total] : examples) CHECK(total == 64);  // 4 workers x 16, whoever is away
  CHECK(shared_steps > 0);                                        // the random draws took someone away
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "churn under local SGD and DiLoCo: a joiner comes in at the next round's start or at once, the same bits as "
    "processes and threads",
    "[cli][e2e][churn]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/l.lua",
             churn_experiment("{ leave { ranks = { 3 }, step = 3 }, join { ranks = { 3 }, step = 6 } }",
                              "sweep { local_sgd { period = 4, join = \"next_round\" }, local_sgd { period = 4, join = "
                              "\"now\" }, diloco { inner_steps = 4, join = \"next_round\" }, diloco { inner_steps = 4, "
                              "join = \"now\" } }"));
  const auto run = run_laconic(dir, "run l.lua --db l.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const Rows rows = rows_of(dir + "/l.db");
  for (const auto& [key, n] : rows.count) CHECK(n == 1);
  int checked = 0;
  for (const char* schedule : {"local_sgd,period=4", "diloco,inner_steps=4"})
    for (const std::string join : {"next_round", "now"}) {
      const std::string tail = std::string("schedule=") + schedule + ",join=" + join + ",seed=1";
      const std::string procs = "placement=processes," + tail, threads = "placement=threads," + tail;
      // Rounds of 4 steps begin at steps 0, 4, 8: "next_round" waits for step 8, "now" joins at 6.
      const std::int64_t back = join == "now" ? 6 : 8;
      for (const std::string& name : {procs, threads}) {
        INFO(name);
        CHECK(rows.value.at({name, "member_change", 3, 3}) == -1);
        CHECK(rows.value.at({name, "member_change", back, 3}) == 1);
        for (std::int64_t step = 0; step < 12; ++step)
          CHECK(rows.value.count({name, "train_loss", step, 3}) == (step < 3 || step >= back ? 1U : 0U));
        // The weights and momentum, the last average and, under DiLoCo, the outer momentum too.
        const double floats = std::string(schedule).starts_with("diloco") ? 4 * 4810 : 3 * 4810;
        CHECK(rows.value.at({name, "join_bytes", back, 0}) > 4 * floats);
      }
      for (const auto& [key, value] : rows.value) {
        const auto& [name, metric, step, worker] = key;
        if (name == procs && (metric == "train_loss" || metric == "bytes_sent")) {
          CHECK(value == rows.value.at({threads, metric, step, worker}));
          ++checked;
        }
      }
    }
  CHECK(checked > 4 * 40);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a resume from a checkpoint taken while a worker is away continues as the undisturbed run",
          "[cli][e2e][churn][resume]") {
  using namespace std::chrono_literals;
  const std::string dir = make_temp_dir();
  // Rank 3 leaves before step 3 and comes back at 5, which local SGD's next round holds until 8;
  // the workers sleep 0.1 s a step (a straggler delay, which changes no number).
  std::string file = churn_experiment("{ leave { ranks = { 3 }, step = 3 }, join { ranks = { 3 }, step = 5 } }",
                                      "local_sgd { period = 4, stragglers = 3, straggler_delay = 0.1 }");
  file.replace(file.find("max_steps = 12"), 14, "max_steps = 16");
  file.replace(file.find("sweep { processes(), threads() }"), 32, "processes()");
  write_file(dir + "/k.lua", file);
  const pid_t controller = start_laconic(dir, {"run", "k.lua", "--db", "k.db", "--checkpoint-every", "2"});
  REQUIRE(controller > 0);
  const auto checkpoint = [&] {
    try {
      auto db = storage::Database::open_read_only(dir + "/k.db");
      const auto run = storage::find_run(*db, 1);
      return run && run->checkpoint_step ? *run->checkpoint_step : std::int64_t{-1};
    } catch (const std::exception&) {
      return std::int64_t{-1};  // not created yet, or busy
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (checkpoint() < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  REQUIRE(::kill(controller, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(controller, &status, 0) == controller);
  const std::int64_t resume_at = checkpoint();
  INFO("resumed at " << resume_at);
  REQUIRE(resume_at >= 4);
  REQUIRE(resume_at <= 8);  // rank 3 away, its join held back by the round
  const auto resumed = run_laconic(dir, "run k.lua --db k.db --resume", 300);
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.status == 0);
  const auto reference = run_laconic(dir, "run k.lua --db reference.db", 300);
  REQUIRE(reference.status == 0);
  const Rows got = rows_of(dir + "/k.db"), want = rows_of(dir + "/reference.db");
  for (const auto& [key, n] : got.count) CHECK(n == 1);
  int compared = 0;
  for (const auto& [key, value] : want.value) {
    const auto& [name, metric, step, worker] = key;
    if (metric != "train_loss" && metric != "bytes_sent" && metric != "member_change" && metric != "members") continue;
    INFO(metric << " step " << step << " worker " << worker);
    REQUIRE(got.value.count(key) == 1);
    CHECK(got.value.at(key) == value);
    ++compared;
  }
  CHECK(compared > 100);
  CHECK(want.value.at({"seed=1", "member_change", 8, 3}) == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "a joiner with fresh state takes worker 0's weights but the optimizer state of the run's start; refused "
    "under synchronous SGD",
    "[cli][e2e][churn]") {
  const std::string dir = make_temp_dir();
  // The list form names the state on the join; its script reads it back.
  write_file(
      dir + "/l.lua",
      churn_experiment("{ leave { ranks = { 3 }, step = 3 }, join { ranks = { 3 }, step = 6, state = \"fresh\" } }",
                       "local_sgd { period = 4, join = \"now\" }"));
  const auto listed = run_laconic(dir, "check l.lua --json", 120);
  REQUIRE(listed.status == 0);
  CHECK(nlohmann::json::parse(listed.out)[0]["config"]["churn"]["events"] == "leave 3 at 3; join 3 at 6 fresh");
  write_file(dir + "/f.lua",
             churn_experiment("sweep { script { events = \"leave 3 at 3; join 3 at 6\" }, script { events = "
                              "\"leave 3 at 3; join 3 at 6 fresh\" } }",
                              "local_sgd { period = 4, join = \"now\" }"));
  const auto run = run_laconic(dir, "run f.lua --db f.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const Rows rows = rows_of(dir + "/f.db");
  const auto name_of = runs_by_join_state(rows, "fresh");  // "copied, processes" -> run name
  REQUIRE(name_of.size() == 4);
  const auto at = [&](const std::string& run, const char* key, std::int64_t step, std::int64_t worker) {
    return rows.value.at({name_of.at(run), key, step, worker});
  };
  // The same weights at the join: the same loss at its first step; then its own momentum differs.
  CHECK(at("fresh, processes", "train_loss", 6, 3) == at("copied, processes", "train_loss", 6, 3));
  CHECK(at("fresh, processes", "train_loss", 7, 3) != at("copied, processes", "train_loss", 7, 3));
  // Worker 0 sent no optimizer state: SGD's momentum, 4,810 floats with their header, less.
  const double saved = at("copied, processes", "join_bytes", 6, 0) - at("fresh, processes", "join_bytes", 6, 0);
  CHECK(saved >= 4 * 4810);
  CHECK(saved < 4 * 4810 + 200);
  for (const std::string state : {"fresh", "copied"})
    for (std::int64_t step = 0; step < 12; ++step)
      for (std::int64_t worker = 0; worker < 4; ++worker)
        if (rows.value.count({name_of.at(state + ", processes"), "train_loss", step, worker}))
          CHECK(at(state + ", processes", "train_loss", step, worker) ==
                at(state + ", threads", "train_loss", step, worker));
  write_file(dir + "/s.lua", churn_experiment("script { events = \"leave 3 at 3; join 3 at 6 fresh\" }"));
  const auto refused = run_laconic(dir, "check s.lua", 120);
  CHECK(refused.status != 0);
  CHECK_THAT(refused.err, Catch::Contains("a join's state = \"fresh\" under local_sgd { } and diloco { }"));
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "a joiner with averaged state takes the staying workers' mean momentum, the same bits under processes and "
    "threads; refused under synchronous SGD",
    "[cli][e2e][churn]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/a.lua", churn_experiment("sweep { script { events = \"leave 3 at 3; join 3 at 6\" }, script { "
                                              "events = \"leave 3 at 3; join 3 at 6 averaged\" } }",
                                              "local_sgd { period = 4, join = \"now\" }"));
  const auto run = run_laconic(dir, "run a.lua --db a.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const Rows rows = rows_of(dir + "/a.db");
  const auto name_of = runs_by_join_state(rows, "averaged");  // "averaged, threads" -> run name
  REQUIRE(name_of.size() == 4);
  const auto at = [&](const std::string& run, const char* key, std::int64_t step, std::int64_t worker) {
    return rows.value.at({name_of.at(run), key, step, worker});
  };
  // Worker 0's weights at the join either way: the same loss at its first step; then the mean of
  // three momenta moves it elsewhere than worker 0's own. The payload has the same layout.
  CHECK(at("averaged, processes", "train_loss", 6, 3) == at("copied, processes", "train_loss", 6, 3));
  CHECK(at("averaged, processes", "train_loss", 7, 3) != at("copied, processes", "train_loss", 7, 3));
  CHECK(at("averaged, processes", "join_bytes", 6, 0) == at("copied, processes", "join_bytes", 6, 0));
  for (const auto& [key, value] : rows.value) {
    const auto& [name, metric, step, worker] = key;
    if (name == name_of.at("averaged, processes") && (metric == "train_loss" || metric == "join_bytes"))
      CHECK(value == rows.value.at({name_of.at("averaged, threads"), metric, step, worker}));
  }
  write_file(dir + "/s.lua", churn_experiment("script { events = \"leave 3 at 3; join 3 at 6 averaged\" }"));
  const auto refused = run_laconic(dir, "check s.lua", 120);
  CHECK(refused.status != 0);
  CHECK_THAT(refused.err, Catch::Contains("a join's state = \"averaged\" under local_sgd { } and diloco { }"));
  std::filesystem::remove_all(dir);
}
