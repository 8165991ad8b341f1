#include "cli/run_command.hpp"

#include <unistd.h>

#include <cmath>
#include <iostream>
#include <vector>

#include "cli/format.hpp"
#include "reports/format.hpp"
#include "cli/launcher.hpp"
#include "cli/progress.hpp"
#include "cli/catalog_commands.hpp"
#include "engine/catalog.hpp"
#include "lua/experiment.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"

namespace laconic::cli {
namespace {

struct PlannedRun {
  std::size_t index;       // position in the plan (what workers are told)
  std::int64_t id = -1;    // runs.id; -1 when skipped
  std::optional<std::int64_t> done;  // id of the FINISHED run that makes this one unnecessary
};

std::string result_line(storage::Database& db, std::int64_t run_id) {
  auto row = storage::find_run(db, run_id);
  if (!row) return "";
  std::string line = row->status;
  if (!std::isnan(row->final_test_accuracy))
    line += "  test accuracy " + reports::fixed(row->final_test_accuracy, 4);
  line += "  sent " + reports::human_bytes(row->bytes_sent) + " (dense " + reports::human_bytes(row->bytes_dense) +
          ")  " + human_seconds(row->wall_time);
  if (!row->error.empty()) line += "\n    " + row->error;
  return line;
}

}  // namespace

int run_command(const RunArgs& args, const std::atomic<bool>& stop) {
  engine::EngineCatalog catalog;
  // Load and validate everything before the database is touched: a broken file records nothing.
  const auto plan = lua::load_experiment(args.file, catalog);
  const std::vector<std::size_t> selected = select_runs(plan, args.file, args.only);
  check_runs(catalog, plan, selected);
  auto db = storage::Database::open(args.db);
  storage::Recorder recorder(*db);
  const auto experiment_id = recorder.add_experiment(plan.name, args.file, plan.file_hash);

  std::vector<PlannedRun> runs;
  for (std::size_t i : selected) {
    PlannedRun run{i, -1, std::nullopt};
    if (args.resume) run.done = recorder.find_finished(plan.name, plan.runs[i]);
    if (!run.done) run.id = recorder.add_run(experiment_id, plan.runs[i]);
    runs.push_back(run);
  }

  ProgressLine progress(::isatty(STDERR_FILENO) == 1);
  int finished = 0, failed = 0, skipped = 0;
  bool interrupted = false;
  const std::size_t total = runs.size();
  std::size_t position = 0;
  for (const auto& run : runs) {
    const RunConfig& config = plan.runs[run.index];
    const std::string label =
        str_cat("[", ++position, "/", total, "] ", plan.name, " ", config.name);
    if (run.done) {
      std::cout << label << ": already finished as run " << *run.done << ", skipped\n";
      ++skipped;
      continue;
    }
    if (interrupted) {
      recorder.finish_run(run.id, storage::RunStatus::Killed, "not started: interrupted");
      continue;
    }
    recorder.start_run(run.id);
    LaunchOutcome outcome;
    {
      auto sink = recorder.metrics_sink(run.id);
      LaunchSpec spec{args.executable, args.file, plan.file_hash, run.index, config.name,
                      catalog.world_size(config), config.timeout};
      progress.begin(label);
      LaunchObserver observer;
      observer.on_progress = [&](const ProgressMessage& p) { progress.update(p, config.epochs); };
      // Every few seconds: commit what arrived (a controller crash then loses at most that much)
      // and show readers that the run is alive.
      observer.on_tick = [&] {
        sink->flush();
        recorder.heartbeat(run.id);
      };
      try {
        outcome = launch_workers(spec, *sink, observer, stop);
      } catch (const Error& e) {
        outcome.error = e.what();
      }
      progress.clear();
    }  // the sink commits its last batch here, before the status says the run is over
    if (outcome.ok) {
      recorder.finish_run(run.id, storage::RunStatus::Finished);
      ++finished;
    } else if (outcome.interrupted) {
      recorder.finish_run(run.id, storage::RunStatus::Killed, outcome.error);
      interrupted = true;
    } else {
      recorder.finish_run(run.id, storage::RunStatus::Failed, outcome.error);
      ++failed;
    }
    std::cout << label << ": " << result_line(*db, run.id) << std::endl;
  }
  std::cout << plan.name << ": " << total << " runs, " << finished << " finished, " << failed
            << " failed, " << skipped << " skipped" << (interrupted ? ", interrupted" : "")
            << " (database " << args.db << ")\n";
  if (interrupted) return 130;
  return failed > 0 ? 1 : 0;
}

}  // namespace laconic::cli
