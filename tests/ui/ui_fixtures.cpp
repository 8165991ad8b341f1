// Writes the databases the browser tests of `laconic ui` open (tests/ui/ui.test.mjs), through
// the Recorder and its sink as `laconic run` writes them, without training:
//   ui_fixtures small DB         a small sweep: dense and Top-k on two seeds, fp16 on one, a
//                                failed run, a stale RUNNING one, and an experiment whose names
//                                are HTML
//   ui_fixtures many DB N        N finished runs in one experiment
//   ui_fixtures series DB N      one run whose train_loss has N points and one spike
//   ui_fixtures dashboard DB N   one run with twelve metrics of N points each
//   ui_fixtures live DB SECONDS  a new RUNNING run, a train_loss point every 100 ms, for SECONDS
//   ui_fixtures hardware DB      dense and Top-k on two seeds, both reaching the target, whose
//                                runs name a hardware profile (hardware = profile { ... }) written
//                                next to DB as gpu.json: a GPU ten times this machine's compute
//   ui_fixtures clocks DB        dense on process ranks, Top-k on thread ranks, both with their
//                                steps projected onto the link (projected_time_step)
//   ui_fixtures verdicts DB      experiment "verdicts": seven compressors over two seeds whose answer
//                                holds every verdict (tests/reports/verdict_sweep.hpp;
//                                docs/reports.md's worked example)
//   ui_fixtures where DB CASES   experiment "where" and, into CASES (JSON), the table of --where
//                                cases that `laconic runs` passes too (tests/storage/where_cases.hpp)
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "engine/core/metric_keys.hpp"
#include "storage/database.hpp"
#include "storage/recorder.hpp"
#include "storage/sqlite_sink.hpp"
#include "storage/statement.hpp"
#include "tests/reports/verdict_sweep.hpp"
#include "tests/storage/where_cases.hpp"

using namespace laconic;

namespace {

RunConfig config_of(const std::string& experiment, const std::string& compressor, double ratio, std::int64_t seed) {
  RunConfig c;
  c.experiment = experiment;
  c.dataset = {"dataset", "fashion_mnist", {}};
  c.model = {"model", "lenet5", {}};
  c.optimizer = {"optimizer", "sgd", {{"lr", 0.05}, {"momentum", 0.9}}};
  c.topology = {"topology", "allreduce", {}};
  c.schedule = {"schedule", "synchronous", {}};
  c.compressor = {"compressor", compressor, {}};
  c.network = {"network", "link", {{"bandwidth", std::string("1Gbit")}, {"latency", std::string("50us")}}};
  c.workers = 2;
  c.seed = seed;
  c.swept = {{"compressor", compressor}, {"seed", seed}};
  c.name = "compressor=" + compressor;
  if (compressor == "topk") {
    c.compressor.fields["ratio"] = ratio;
    c.swept["compressor.ratio"] = ratio;
    c.name += ",ratio=" + format_value(Value{ratio});
  }
  c.name += ",seed=" + std::to_string(seed);
  return c;
}

// Three epochs of four steps on two workers; the last test accuracy is `accuracy`. `clock`: the
// rank clock its times are on ("wall", or "thread_cpu" for thread ranks); `projected`: its steps
// projected onto the link too (projected_time_step).
void record(storage::Recorder& recorder, std::int64_t run, double accuracy, double bytes_per_step, double seed,
            const std::string& clock = "wall", bool projected = false) {
  recorder.start_run(run);
  recorder.record_fact(run, "rank_clock", clock);
  auto sink = recorder.metrics_sink(run);
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int w = 0; w < 2; ++w) {
      for (int s = 0; s < 4; ++s) {
        const int step = epoch * 4 + s;
        const double wall = 0.01 * step;
        sink->record({keys::kTrainLoss, step, epoch, w, wall, 2.0 - 0.1 * step + 0.01 * seed + 0.001 * w});
        sink->record({keys::kTimeForward, step, epoch, w, wall, 0.002});
        sink->record({keys::kTimeBackward, step, epoch, w, wall, 0.003});
        sink->record({keys::kTimeOptimizer, step, epoch, w, wall, 0.0005});
        sink->record({keys::kTimeCompress, step, epoch, w, wall, bytes_per_step < 1e5 ? 0.001 : 0});
        sink->record({keys::kTimeDecompress, step, epoch, w, wall, 0.0001});
        sink->record({keys::kTimeWait, step, epoch, w, wall, 0.0002});
        sink->record({keys::kTimeCommunicate, step, epoch, w, wall, bytes_per_step / 1e8});
        sink->record({keys::kProjectedTimeCommunicate, step, epoch, w, wall, bytes_per_step * 8 / 1e9});
        sink->record({keys::kTimeStep, step, epoch, w, wall, 0.0058 + bytes_per_step / 1e8});
        if (projected)
          sink->record({keys::kProjectedTimeStep, step, epoch, w, wall, 0.0058 + step * 1e-4 + bytes_per_step * 8 / 1e9});
        sink->record({keys::kBytesSent, step, epoch, w, wall, bytes_per_step});
        sink->record({keys::kBytesDense, step, epoch, w, wall, 247000});
        sink->record({keys::kPayloadBytes, step, epoch, w, wall, bytes_per_step});
        sink->record({keys::kMessages, step, epoch, w, wall, 2});
        sink->record({keys::kLinkBytes, step, epoch, w, wall, bytes_per_step});
      }
      sink->record({keys::kEpochTrainLoss, epoch * 4 + 3, epoch, w, 0.04, 1.8 - 0.2 * epoch});
      sink->record({keys::kEpochTime, epoch * 4 + 3, epoch, w, 0.04, 0.05});
    }
    sink->record({keys::kTestAccuracy, epoch * 4 + 3, epoch, 0, 0.04 * (epoch + 1), accuracy - 0.1 * (2 - epoch)});
    sink->record({keys::kTestLoss, epoch * 4 + 3, epoch, 0, 0.04 * (epoch + 1), 0.5 + 0.1 * (2 - epoch)});
  }
  sink->record({keys::kModelParameters, 0, 0, 0, 0, 61706});
  sink->flush();
  recorder.finish_run(run, storage::RunStatus::Finished);
}

void small(const std::string& path) {
  auto db = storage::Database::open(path);
  storage::Recorder recorder(*db);
  const auto sweep = recorder.add_experiment("sweep", "sweep.lua", "abc");
  for (std::int64_t seed : {1, 2}) {
    record(recorder, recorder.add_run(sweep, config_of("sweep", "none", 0, seed)), 0.85 + 0.002 * seed, 247000,
           static_cast<double>(seed));
    record(recorder, recorder.add_run(sweep, config_of("sweep", "topk", 0.01, seed)), 0.83 + 0.002 * seed, 5000,
           static_cast<double>(seed));
  }
  // Dominated on both counts (Top-k is more accurate and sends less): off the Pareto front.
  record(recorder, recorder.add_run(sweep, config_of("sweep", "fp16", 0, 1)), 0.80, 123500, 1);
  const auto failed = recorder.add_run(sweep, config_of("sweep", "qsgd", 0, 1));
  recorder.start_run(failed);
  recorder.finish_run(failed, storage::RunStatus::Failed, "worker 1 exited with status 1: Connection reset by peer");
  // A run whose controller is gone: RUNNING in the table, its heartbeat long past (stale).
  const auto stale = recorder.add_run(sweep, config_of("sweep", "bf16", 0, 1));
  recorder.start_run(stale);
  storage::Statement(db->handle(), "UPDATE runs SET heartbeat = 1000, controller_pid = 999999999 WHERE id = ?1")
      .bind_int64(1, stale)
      .run();
  // Names from a user's file are text, never markup.
  const std::string hostile = "<img src=x onerror=\"window.__xss=1\">";
  const auto evil = recorder.add_experiment(hostile, "evil.lua", "def");
  RunConfig c = config_of(hostile, "none", 0, 1);
  c.name = "<script>window.__xss=2</script>";
  c.swept["compressor"] = std::string("<b onmouseover=\"window.__xss=3\">none</b>");
  const auto run = recorder.add_run(evil, c);
  recorder.start_run(run);
  recorder.finish_run(run, storage::RunStatus::Failed, "<img src=y onerror=\"window.__xss=4\"> in the error");
}

// Dense on process ranks (times measured) and Top-k on thread ranks (times derived), both with
// their steps projected onto the link.
void clocks(const std::string& path) {
  auto db = storage::Database::open(path);
  storage::Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("clocks", "clocks.lua", "c10c");
  record(recorder, recorder.add_run(experiment, config_of("clocks", "none", 0, 1)), 0.85, 247000, 1, "wall", true);
  record(recorder, recorder.add_run(experiment, config_of("clocks", "topk", 0.01, 1)), 0.83, 5000, 1, "thread_cpu",
         true);
}

// LeNet-5 as record() writes it (61706 parameters, batch 64) at a tenth of its compute.
const char* const kGpuProfile = R"({
  "laconic_hardware_profile": 1, "name": "Fixture GPU",
  "models": [{"model": "lenet5", "batch_size": 64, "parameters": 61706,
              "forward": "0.2ms", "backward": "0.3ms", "optimizer": "0.05ms"}],
  "compressors": {"topk": {"compress": {"per_call": "20us", "per_element": "0.01ns"},
                           "decompress": {"per_call": "5us", "per_element": "0.01ns"}}}
})";

void hardware(const std::string& path) {
  const std::string profile = (std::filesystem::absolute(path).parent_path() / "gpu.json").string();
  std::ofstream(profile) << kGpuProfile;
  auto db = storage::Database::open(path);
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("gpu", "gpu.lua", "abc");
  for (std::int64_t seed : {1, 2})
    for (const char* compressor : {"none", "topk"}) {
      RunConfig c = config_of("gpu", compressor, 0.01, seed);
      c.hardware = {"hardware", "profile", {{"file", profile}}};
      const bool dense = std::string(compressor) == "none";
      record(recorder, recorder.add_run(e, c), (dense ? 0.85 : 0.849) + 0.001 * static_cast<double>(seed),
             dense ? 247000 : 5000, static_cast<double>(seed));
    }
}

void many(const std::string& path, int count) {
  auto db = storage::Database::open(path);
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("many", "many.lua", "abc");
  storage::Statement(db->handle(), "BEGIN").run();  // one transaction: 10,000 runs in seconds
  for (int i = 0; i < count; ++i) {
    RunConfig c = config_of("many", i % 2 ? "topk" : "none", 0.01, i / 2 + 1);
    const auto run = recorder.add_run(e, c);
    recorder.start_run(run);
    storage::SqliteSink sink(*db, run);
    sink.record({keys::kTestAccuracy, 9, 0, 0, 1.0, 0.5 + 0.4 * ((i * 7919) % count) / count});
    sink.record({keys::kBytesSent, 9, 0, 0, 1.0, i % 2 ? 5000.0 : 247000.0});
    sink.write_in_open_transaction();
    recorder.finish_run(run, storage::RunStatus::Finished);
  }
  storage::Statement(db->handle(), "COMMIT").run();
}

// A RUNNING run of dense, the only one of experiment `name`.
std::int64_t started_run(storage::Recorder& recorder, const std::string& name) {
  const auto run = recorder.add_run(recorder.add_experiment(name, name + ".lua", "abc"), config_of(name, "none", 0, 1));
  recorder.start_run(run);
  return run;
}

void series(const std::string& path, std::int64_t count) {
  auto db = storage::Database::open(path);
  storage::Recorder recorder(*db);
  const auto run = started_run(recorder, "long");
  storage::SqliteSink sink(*db, run, 100000);
  const std::int64_t spike = count / 2 + 17;
  for (std::int64_t step = 0; step < count; ++step) {
    const double value =
        step == spike ? 1000.0 : 2.0 * std::exp(-static_cast<double>(step) / count) + 0.01 * std::sin(step);
    sink.record({keys::kTrainLoss, step, 0, 0, 0.001 * static_cast<double>(step), value});
  }
  sink.flush();
  recorder.finish_run(run, storage::RunStatus::Finished);
}

// One run with twelve metrics of `count` points each: the run page's dashboard at scale.
void dashboard_run(const std::string& path, std::int64_t count) {
  auto db = storage::Database::open(path);
  storage::Recorder recorder(*db);
  const auto run = started_run(recorder, "wide");
  storage::SqliteSink sink(*db, run, 100000);
  const char* const twelve[] = {keys::kTrainLoss,     keys::kTimeForward,   keys::kTimeBackward, keys::kTimeCompress,
                                keys::kTimeDecompress, keys::kTimeWait,      keys::kTimeCommunicate, keys::kTimeStep,
                                keys::kBytesSent,     keys::kBytesReceived, keys::kLr,           keys::kProjectedTimeStep};
  for (std::int64_t step = 0; step < count; ++step)
    for (int k = 0; k < 12; ++k)
      sink.record({twelve[k], step, 0, 0, 0.001 * static_cast<double>(step),
                   (k + 1) * (1.0 + 0.1 * std::sin(0.001 * static_cast<double>(step) * (k + 1)))});
  sink.flush();
  recorder.finish_run(run, storage::RunStatus::Finished);
}

void live(const std::string& path, double seconds) {
  auto db = storage::Database::open(path);
  storage::Recorder recorder(*db);
  const auto run = started_run(recorder, "live");
  std::cout << run << std::endl;
  storage::SqliteSink sink(*db, run);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t step = 0; std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds);
       ++step) {
    sink.record(
        {keys::kTrainLoss, step, 0, 0, 0.1 * static_cast<double>(step), 3.0 - 0.01 * static_cast<double>(step)});
    sink.flush();
    recorder.heartbeat(run);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  recorder.finish_run(run, storage::RunStatus::Finished);
}

}  // namespace

// Churn: worker 1 of two leaves before step 4 and comes back at 8 (no rows meanwhile), as worker
// 0 records it (member_change, members, join_bytes, join_seconds).
void churn(const std::string& path) {
  auto db = storage::Database::open(path);
  storage::Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("churn", "churn.lua", "c4a1");
  RunConfig config = config_of("churn", "none", 0, 1);
  config.churn = ComponentSpec{"churn", "script", {{"events", Value{std::string("leave 1 at 4; join 1 at 8")}}}};
  const auto run = recorder.add_run(experiment, config);
  recorder.start_run(run);
  auto sink = recorder.metrics_sink(run);
  for (int step = 0; step < 12; ++step)
    for (int w = 0; w < 2; ++w)
      if (w == 0 || step < 4 || step >= 8) sink->record({keys::kTrainLoss, step, 0, w, 0.01 * step, 2.0 - 0.1 * step});
  sink->record({keys::kMemberChange, 4, 0, 1, 0.04, -1});
  sink->record({keys::kMembers, 4, 0, 0, 0.04, 1});
  sink->record({keys::kMemberChange, 8, 0, 1, 0.08, 1});
  sink->record({keys::kMembers, 8, 0, 0, 0.08, 2});
  sink->record({keys::kJoinBytes, 8, 0, 0, 0.08, 40000});
  sink->record({keys::kJoinSeconds, 8, 0, 0, 0.08, 0.002});
  sink->record({keys::kTestAccuracy, 11, 0, 0, 0.12, 0.8});
  sink->flush();
  recorder.finish_run(run, storage::RunStatus::Finished);
}

int main(int argc, char** argv) {
  const std::string mode = argc > 2 ? argv[1] : "";
  try {
    if (mode == "small")
      small(argv[2]);
    else if (mode == "many" && argc > 3)
      many(argv[2], std::atoi(argv[3]));
    else if (mode == "series" && argc > 3)
      series(argv[2], std::atoll(argv[3]));
    else if (mode == "dashboard" && argc > 3)
      dashboard_run(argv[2], std::atoll(argv[3]));
    else if (mode == "live" && argc > 3)
      live(argv[2], std::atof(argv[3]));
    else if (mode == "hardware")
      hardware(argv[2]);
    else if (mode == "clocks")
      clocks(argv[2]);
    else if (mode == "churn")
      churn(argv[2]);
    else if (mode == "verdicts")
      reports::testing::record_verdict_sweep(*storage::Database::open(argv[2]), "verdicts");
    else if (mode == "where" && argc > 3) {
      storage::testing::record_where_runs(*storage::Database::open(argv[2]));
      std::ofstream(argv[3]) << storage::testing::where_cases_json().dump(2) << "\n";
    } else {
      std::cerr << "usage: ui_fixtures small DB | many DB N | series DB N | dashboard DB N | live DB SECONDS | hardware DB"
                   " | clocks DB | churn DB | verdicts DB"
                   " | where DB CASES\n";
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "ui_fixtures: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
