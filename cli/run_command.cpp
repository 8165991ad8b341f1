#include "cli/run_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <iostream>
#include <functional>
#include <thread>
#include <cstdlib>
#include <vector>

#include "cli/format.hpp"
#include "reports/format.hpp"
#include "cli/launcher.hpp"
#include "cli/progress.hpp"
#include "cli/catalog_commands.hpp"
#include "engine/catalog.hpp"
#include "engine/train/checkpoint.hpp"
#include "lua/experiment.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"

namespace laconic::cli {
namespace {

struct PlannedRun {
  std::size_t index;       // position in the plan (what workers are told)
  RunConfig recorded;      // as the database records it (tuning phases rename it)
  std::int64_t id = -1;    // runs.id; -1 when skipped
  std::optional<std::int64_t> done{};  // id of the run that makes this one unnecessary
  std::string done_as{};               // how that run ended ("finished", "diverged", "running")
  std::int64_t resume_step = -1;     // continue run `id` from its checkpoint of this step
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Where run `run_id`'s workers keep their checkpoints: DB.checkpoints/run-ID.
std::filesystem::path checkpoint_dir(const std::string& db, std::int64_t run_id) {
  return std::filesystem::path(db + ".checkpoints") / str_cat("run-", run_id);
}

bool has_checkpoints(const std::filesystem::path& dir, std::int64_t step, int world) {
  for (int rank = 0; rank < world; ++rank)
    if (!std::filesystem::exists(train::checkpoint_path(dir.string(), rank, step))) return false;
  return true;
}

/// Removes the files of checkpoints older than `step` (the newest complete one is kept).
void remove_older_checkpoints(const std::filesystem::path& dir, std::int64_t step) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    const auto at = name.find(".step-");
    if (at == std::string::npos) continue;
    const std::int64_t saved = std::atoll(name.c_str() + at + 6);
    if (saved < step) std::filesystem::remove(entry.path(), error);
  }
}

/// Refuses a resume when the experiment was recorded, but never from this version of the file.
void check_unchanged(storage::Database& db, const lua::ExperimentPlan& plan, const std::string& file) {
  std::vector<storage::ExperimentRow> same_name;
  for (auto& e : storage::list_experiments(db))
    if (e.name == plan.name) same_name.push_back(e);
  if (same_name.empty()) return;
  for (const auto& e : same_name)
    if (e.file_hash == plan.file_hash) return;
  const auto& last = same_name.back();
  throw ConfigError(str_cat("experiment '", plan.name, "' changed since it was recorded: ", file, " now hashes to ",
                            plan.file_hash, ", the runs in the database came from ", last.file_path, " with hash ",
                            last.file_hash, "; run without --resume to record new runs, or add --force to "
                            "resume anyway (runs whose resolved configuration is unchanged are skipped)"));
}

// The 1-minute load average, "0.52"; "unknown" where the system cannot say.
std::string load_average_text() {
  double load[1];
  if (::getloadavg(load, 1) != 1) return "unknown";
  return reports::fixed(load[0], 2);
}

// Passes every record on, and shows worker 0's test metric to `on_evaluation` on the way.
class EvaluationTap : public MetricsSink {
 public:
  EvaluationTap(MetricsSink& inner, std::function<void(const MetricRecord&)> on_evaluation)
      : inner_(inner), on_evaluation_(std::move(on_evaluation)) {}
  void record(const MetricRecord& m) override {
    inner_.record(m);
    if (m.worker == 0 && m.key == "test_accuracy") on_evaluation_(m);
  }
  void flush() override { inner_.flush(); }

 private:
  MetricsSink& inner_;
  std::function<void(const MetricRecord&)> on_evaluation_;
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

/// Runs planned runs one after another, recording each; counts what happened.
class Executor {
 public:
  Executor(const RunArgs& args, const std::atomic<bool>& stop, const lua::ExperimentPlan& plan,
           const engine::EngineCatalog& catalog, storage::Database& db,
           storage::Recorder& recorder, std::int64_t experiment_id)
      : args_(args), stop_(stop), plan_(plan), catalog_(catalog), db_(db), recorder_(recorder),
        experiment_id_(experiment_id),
        progress_(progress_mode_for(stdout, args.quiet), stdout, args.progress_every) {}

  /// Records `runs` (filling their ids) and runs them.
  void execute(std::vector<PlannedRun>& runs) {
    std::size_t to_train = 0;
    for (PlannedRun& run : runs) {
      if (args_.resume) find_previous(run);
      if (!run.done && run.id < 0) run.id = recorder_.add_run(experiment_id_, run.recorded);
      to_train += run.done ? 0 : 1;
    }
    progress_.clock().add_runs(to_train);
    for (const PlannedRun& run : runs) execute_one(run, runs.size());
  }

  /// The last recorded value of `metric` of a run that finished (NaN otherwise).
  double final_metric(const PlannedRun& run, const std::string& metric) {
    const std::int64_t id = run.done ? *run.done : run.id;
    const auto row = storage::find_run(db_, id);
    if (!row || row->status != "FINISHED") return std::nan("");
    const auto summary = storage::summary_of(db_, id);
    const auto it = summary.find(metric);
    return it == summary.end() ? std::nan("") : it->second.last;
  }

  bool interrupted() const { return interrupted_; }

  /// The controller's facts about the host of a run (its ranks' own come from rank 0), and a
  /// warning when the ranks outnumber the cores.
  void record_host_facts(std::int64_t run_id, int world, const std::string& label) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const bool oversubscribed = static_cast<unsigned>(world) > cores;
    recorder_.record_fact(run_id, "cores", std::to_string(cores));
    recorder_.record_fact(run_id, "ranks_on_host", std::to_string(world));
    recorder_.record_fact(run_id, "oversubscribed", oversubscribed ? "true" : "false");
    recorder_.record_fact(run_id, "load_start", load_average_text());
    if (oversubscribed && !args_.quiet)
      std::cout << label << ": warning: " << world << " ranks on " << cores
                << " cores: they take turns, so its times measure contention as well as the method" << std::endl;
  }

  /// With --resume: what the database already holds of this run decides whether it is done,
  /// continues from a checkpoint, or runs again.
  void find_previous(PlannedRun& run) {
    if ((run.done = recorder_.find_finished(plan_.name, run.recorded))) {
      run.done_as = "finished";
      return;
    }
    const auto id = recorder_.find_unfinished(plan_.name, run.recorded);
    if (!id) return;
    const auto row = storage::find_run(db_, *id);
    if (row->status == "DIVERGED") {  // a result: running it again would diverge again
      run.done = id;
      run.done_as = "diverged";
      return;
    }
    if (row->status == "RUNNING" && !row->stale) {
      run.done = id;
      run.done_as = str_cat("running under controller ", row->controller_pid, " on ", row->host);
      return;
    }
    if (row->status == "RUNNING")
      recorder_.finish_run(*id, storage::RunStatus::Failed,
                           "its controller stopped without ending it (stale heartbeat)");
    const int world = catalog_.world_size(plan_.runs[run.index]);
    if (row->checkpoint_step && has_checkpoints(checkpoint_dir(args_.db, *id), *row->checkpoint_step, world)) {
      run.id = *id;
      run.resume_step = *row->checkpoint_step;
    }
  }
  int report() const {
    std::cout << plan_.name << ": " << position_ << " runs, " << finished_ << " finished, "
              << failed_ << " failed, " << diverged_ << " diverged, " << skipped_ << " skipped"
              << (interrupted_ ? ", interrupted" : "") << " (database " << args_.db << ")\n";
    if (interrupted_) return 130;
    return failed_ > 0 ? 1 : 0;
  }

 private:
  void execute_one(const PlannedRun& run, std::size_t total) {
    const RunConfig& config = plan_.runs[run.index];
    const std::string label = str_cat("[", ++position_, "/", offset_ + total, "] ", plan_.name,
                                      " ", run.recorded.name);
    if (position_ == offset_ + total) offset_ = position_;
    if (run.done) {
      std::cout << label << ": already " << run.done_as << " as run " << *run.done << ", skipped\n";
      ++skipped_;
      return;
    }
    if (interrupted_) {
      recorder_.finish_run(run.id, storage::RunStatus::Killed, "not started: interrupted");
      return;
    }
    const int world = catalog_.world_size(config);
    const auto checkpoints = checkpoint_dir(args_.db, run.id);
    const std::string not_checkpointable = catalog_.why_not_checkpointed(config);
    const bool checkpointing = (args_.checkpoint_every > 0 && not_checkpointable.empty()) || run.resume_step >= 0;
    if (args_.checkpoint_every > 0 && !not_checkpointable.empty() && run.resume_step < 0)
      std::cout << label << ": not checkpointed: " << not_checkpointable << "\n";
    if (run.resume_step >= 0) {
      std::cout << label << ": resuming run " << run.id << " at step " << run.resume_step << "\n";
      recorder_.rewind_run(run.id, run.resume_step);
    }
    if (checkpointing) std::filesystem::create_directories(checkpoints);
    recorder_.start_run(run.id);
    record_host_facts(run.id, world, label);
    LaunchOutcome outcome;
    {
      auto stored = recorder_.metrics_sink(run.id);
      // Worker 0's evaluations also go to the progress display.
      EvaluationTap tap(*stored, [&](const MetricRecord& m) { progress_.evaluated(m.epoch, m.key, m.value); });
      MetricsSink* sink = &tap;
      // Workers expand the file themselves: they are told the plan's index and name.
      LaunchSpec spec{args_.executable, args_.file, plan_.file_hash, run.index, config.name, world, config.timeout};
      if (checkpointing) {
        spec.checkpoint_dir = checkpoints.string();
        spec.checkpoint_every = args_.checkpoint_every;
        spec.resume_step = run.resume_step;
      }
      progress_.begin(label, config.epochs);
      LaunchObserver observer;
      observer.on_progress = [&](const ProgressMessage& p) { progress_.update(p); };
      observer.on_fact = [&](const std::string& key, const std::string& value) {
        recorder_.record_fact(run.id, key, value);
      };
      // Every few seconds: commit what arrived (a controller crash then loses at most that much)
      // and show readers that the run is alive.
      observer.on_tick = [&] {
        sink->flush();
        recorder_.heartbeat(run.id);
      };
      // Commit every step before the checkpoint, then say it may be resumed from.
      observer.on_checkpoint = [&](std::int64_t step) {
        sink->flush();
        recorder_.record_checkpoint(run.id, step);
        remove_older_checkpoints(checkpoints, step);
      };
      try {
        outcome = launch_workers(spec, *sink, observer, stop_);
      } catch (const Error& e) {
        outcome.error = e.what();
      }
      progress_.end();
    }  // the sink commits its last batch here, before the status says the run is over
    recorder_.record_fact(run.id, "load_end", load_average_text());
    if (outcome.ok || outcome.diverged) {
      // Both are results: --resume skips them, so their checkpoints will never be used.
      std::error_code ignored;
      std::filesystem::remove_all(checkpoints, ignored);
    }
    if (outcome.ok) {
      recorder_.finish_run(run.id, storage::RunStatus::Finished);
      ++finished_;
    } else if (outcome.diverged) {
      recorder_.finish_run(run.id, storage::RunStatus::Diverged, outcome.error);
      ++diverged_;
    } else if (outcome.interrupted) {
      recorder_.finish_run(run.id, storage::RunStatus::Killed, outcome.error);
      interrupted_ = true;
    } else {
      recorder_.finish_run(run.id, storage::RunStatus::Failed, outcome.error);
      ++failed_;
    }
    std::cout << label << ": " << result_line(db_, run.id) << std::endl;
  }

  const RunArgs& args_;
  const std::atomic<bool>& stop_;
  const lua::ExperimentPlan& plan_;
  const engine::EngineCatalog& catalog_;
  storage::Database& db_;
  storage::Recorder& recorder_;
  std::int64_t experiment_id_;
  Progress progress_;
  int finished_ = 0, failed_ = 0, skipped_ = 0, diverged_ = 0;
  std::size_t position_ = 0, offset_ = 0;
  bool interrupted_ = false;
};

/// The plan's run recorded under a tuning phase: `tune` = "trial" or "best" in its swept
/// variables and name.
RunConfig tuned(const RunConfig& run, const std::string& phase) {
  RunConfig out = run;
  out.swept["tune"] = phase;
  out.name += ",tune=" + phase;
  return out;
}

/// A run's swept variables without `drop` (and the seed), as a key.
std::string key_without(const RunConfig& run, const std::vector<std::string>& drop,
                        bool keep_only_drop) {
  nlohmann::json key = nlohmann::json::object();
  for (const auto& [name, value] : run.swept) {
    const bool listed = std::find(drop.begin(), drop.end(), name) != drop.end();
    if (name == "seed" || listed != keep_only_drop) continue;
    key[name] = value_to_json(value);
  }
  return key.dump();
}

}  // namespace

int run_command(const RunArgs& args, const std::atomic<bool>& stop) {
  engine::EngineCatalog catalog;
  // Load and validate everything before the database is touched: a broken file records nothing.
  const auto plan = lua::load_experiment(args.file, catalog);
  const std::vector<std::size_t> selected = select_runs(plan, args.file, args.only);
  check_runs(catalog, plan, selected);
  auto db = storage::Database::open(args.db);
  if (args.resume && !args.force) check_unchanged(*db, plan, args.file);
  storage::Recorder recorder(*db);
  const auto experiment_id = recorder.add_experiment(plan.name, args.file, plan.file_hash, read_text(args.file));
  Executor executor(args, stop, plan, catalog, *db, recorder, experiment_id);

  if (!plan.tune) {
    std::vector<PlannedRun> runs;
    for (std::size_t i : selected) runs.push_back({i, plan.runs[i]});
    executor.execute(runs);
    return executor.report();
  }

  // Tuning: every trial of every configuration on the first seed, then the best trial of each
  // configuration on every seed (Harris 2020: tune each method on its own).
  const auto& tune = *plan.tune;
  const std::int64_t tuning_seed = plan.runs.front().seed;
  std::vector<PlannedRun> trials;
  for (std::size_t i : selected)
    if (plan.runs[i].seed == tuning_seed) trials.push_back({i, tuned(plan.runs[i], "trial")});
  std::cout << plan.name << ": tuning " << tune.metric << " (" << tune.goal << ") over "
            << tune.trials << " trials per configuration on seed " << tuning_seed << "\n";
  executor.execute(trials);
  if (executor.interrupted()) return executor.report();
  std::map<std::string, std::pair<double, std::string>> best;  // configuration -> metric, trial
  for (const PlannedRun& trial : trials) {
    const double value = executor.final_metric(trial, tune.metric);
    if (std::isnan(value)) continue;
    const std::string config = key_without(plan.runs[trial.index], tune.drawn, false);
    auto it = best.find(config);
    const bool better = it == best.end() ||
                        (tune.goal == "max" ? value > it->second.first : value < it->second.first);
    if (better) best[config] = {value, key_without(plan.runs[trial.index], tune.drawn, true)};
  }
  std::vector<PlannedRun> finals;
  for (std::size_t i : selected) {
    auto it = best.find(key_without(plan.runs[i], tune.drawn, false));
    if (it != best.end() && it->second.second == key_without(plan.runs[i], tune.drawn, true))
      finals.push_back({i, tuned(plan.runs[i], "best")});
  }
  for (const auto& [config, choice] : best)
    std::cout << "  best " << tune.metric << " " << choice.first << " for " << config << " with "
              << choice.second << "\n";
  executor.execute(finals);
  return executor.report();
}

}  // namespace laconic::cli
