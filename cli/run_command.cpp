#include "cli/run_command.hpp"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/catalog_commands.hpp"
#include "cli/durable_writes.hpp"
#include "cli/emulated_network.hpp"
#include "cli/format.hpp"
#include "cli/host_load.hpp"
#include "cli/launched_sweep.hpp"
#include "cli/launcher.hpp"
#include "cli/progress.hpp"
#include "cli/recover_command.hpp"
#include "cli/worker_command.hpp"
#include "engine/catalog.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/runtime.hpp"
#include "lua/experiment.hpp"
#include "reports/format.hpp"
#include "storage/database.hpp"
#include "storage/journal.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/sqlite_sink.hpp"

namespace laconic::cli {
namespace {

/// The host's cores (at least 1).
int host_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

/// The cores this process may run on, "0,1" (its workers inherit them).
std::string affinity_text() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out += (out.empty() ? "" : ",") + std::to_string(cpu);
  return out;
}

struct PlannedRun {
  std::size_t index;                   // position in the plan (what workers are told)
  RunConfig recorded;                  // as the database records it (tuning phases rename it)
  std::int64_t id = -1;                // runs.id; -1 when skipped
  std::optional<std::int64_t> done{};  // id of the run that makes this one unnecessary
  std::string done_as{};               // how that run ended ("finished", "diverged", "running")
  std::int64_t resume_step = -1;       // continue run `id` from its checkpoint of this step
  bool again = false;                  // run `id` again from the start, in place (its rows cleared)
  std::int64_t attempts = 0;           // times run `id` had been started when planned: what its claim expects
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
    const auto saved = train::checkpoint_step_of(entry.path().filename().string());
    if (saved && *saved < step) std::filesystem::remove(entry.path(), error);
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
                            last.file_hash,
                            "; run without --resume to record new runs, or add --force to "
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
    if (m.worker == 0 && m.key == keys::kTestAccuracy) on_evaluation_(m);
  }
  void flush() override { inner_.flush(); }

 private:
  MetricsSink& inner_;
  std::function<void(const MetricRecord&)> on_evaluation_;
};

std::string result_line(storage::Database& db, std::int64_t run_id) {
  auto row = storage::find_run(db, run_id);
  if (!row) return "";
  std::string line = storage::to_string(row->status);
  if (!std::isnan(row->final_test_accuracy)) line += "  test accuracy " + reports::fixed(row->final_test_accuracy, 4);
  line += "  sent " + reports::human_bytes(row->bytes_sent) + " (dense " + reports::human_bytes(row->bytes_dense) +
          ")  " + human_seconds(row->wall_time);
  if (!row->error.empty()) line += "\n    " + row->error;
  return line;
}

/// Rows the controller keeps in memory while the database cannot take them (40 bytes each, so
/// about 80 MB); past it, it stops reading the workers' pipes and they wait.
constexpr std::size_t kMaxPendingRows = 2'000'000;

/// Milliseconds the controller's connection waits for another process's lock before a write is
/// put off (and retried); short, so the controller keeps reading its workers meanwhile.
constexpr int kControllerBusyTimeoutMs = 50;

/// Runs planned runs one after another, recording each; counts what happened.
class Executor {
 public:
  Executor(const RunArgs& args, const std::atomic<bool>& stop, const lua::ExperimentPlan& plan,
           const engine::EngineCatalog& catalog, storage::Database& db, storage::Recorder& recorder,
           std::int64_t experiment_id, LaunchedSweep* sweep)
      : args_(args),
        stop_(stop),
        plan_(plan),
        catalog_(catalog),
        db_(db),
        recorder_(recorder),
        experiment_id_(experiment_id),
        sweep_(sweep),
        // Jobs share one terminal, and a launcher's ranks write to a log even when it hands them a pty
        // (Open MPI does): whole lines there.
        progress_((args.job_index >= 0 || args.launched) && !args.quiet ? ProgressMode::Log
                                                                        : progress_mode_for(stdout, args.quiet),
                  stdout, args.progress_every),
        writes_(recorder, args.db, args.db_retry) {}

  /// Records `runs` (filling their ids) and runs them.
  void execute(std::vector<PlannedRun>& runs) {
    writes_.retry("record the plan", [&] { record_plan(runs); });
    std::size_t to_train = 0;
    for (const PlannedRun& run : runs) to_train += run.done ? 0 : 1;
    progress_.clock().add_runs(to_train);
    for (const PlannedRun& run : runs) execute_one(run, runs.size());
  }

  /// Decides what each run needs and records the new ones, in one transaction: controllers that
  /// plan on one database at once take turns, so each sees the others' runs. With --resume a run
  /// another controller planned is shared (whoever claims it first trains it); without, a run
  /// that a live controller has planned or is training is refused: it would be trained twice.
  void record_plan(std::vector<PlannedRun>& runs) {
    storage::Transaction transaction(db_.handle());
    for (PlannedRun& run : runs) {
      run = PlannedRun{run.index, run.recorded};  // a retried plan starts over
      if (args_.resume)
        find_previous(run);
      else
        refuse_if_planned_elsewhere(run);
      if (!run.done && run.id < 0) run.id = recorder_.add_run(experiment_id_, run.recorded);
    }
    transaction.commit();
  }

  void refuse_if_planned_elsewhere(const PlannedRun& run) {
    const auto id = recorder_.find_unfinished(plan_.name, run.recorded);
    if (!id) return;
    const auto row = storage::find_run(db_, *id);
    const bool in_flight = row->status == storage::RunStatus::Queued || row->status == storage::RunStatus::Running;
    if (!in_flight || !storage::controller_alive(*row) || row->controller_pid == ::getpid()) return;
    throw ConfigError(str_cat("run '", run.recorded.name, "' of experiment '", plan_.name,
                              "' is already planned by the controller ", row->controller_pid, " on ", row->host,
                              " (run ", row->id, ", ", row->status_label(),
                              "): two `laconic run`s of one experiment at once would train it twice; wait for it, or "
                              "add --resume to share its plan (each run is then trained by whichever claims it "
                              "first)"));
  }

  /// The last recorded value of `metric` of a run that finished (NaN otherwise).
  double final_metric(const PlannedRun& run, const std::string& metric) {
    const std::int64_t id = run.done ? *run.done : run.id;
    const auto row = storage::find_run(db_, id);
    if (!row || row->status != storage::RunStatus::Finished) return std::nan("");
    const auto summary = storage::summary_of(db_, id);
    const auto it = summary.find(metric);
    return it == summary.end() ? std::nan("") : it->second.last;
  }

  bool interrupted() const { return interrupted_ || gave_up_ || rank_lost(); }

  /// The controller's facts about the host of a run (its ranks' own come from rank 0), and a
  /// warning when the ranks outnumber the cores.
  void record_host_facts(std::int64_t run_id, int world, const std::string& label) {
    const int cores = host_cores();
    // With --jobs, the other jobs' runs share the host too; a launcher spreads them over hosts.
    const int ranks = sweep_ ? sweep_->ranks_here() : world * (args_.job_index >= 0 ? args_.jobs : 1);
    const bool oversubscribed = sweep_ ? sweep_->oversubscribed() : ranks > cores;
    if (sweep_) {
      writes_.fact(run_id, "launcher", sweep_->launched().description);
      writes_.fact(run_id, "hosts", sweep_->hosts());
    }
    writes_.fact(run_id, "cores", std::to_string(cores));
    writes_.fact(run_id, "ranks_on_host", std::to_string(ranks));
    writes_.fact(run_id, "oversubscribed", oversubscribed ? "true" : "false");
    writes_.fact(run_id, "load_start", load_average_text());
    writes_.fact(run_id, "cpu_affinity", affinity_text());
    ranks_here_ = ranks;
    cpu_at_start_ = sample_cpu();
    if (oversubscribed && !args_.quiet)
      std::cout << label << ": warning: " << ranks << " ranks on " << cores
                << " cores: they take turns, so its times measure contention as well as the method" << std::endl;
  }

  /// How busy the host was since record_host_facts(): the cores other processes and the
  /// hypervisor took, and a warning when the ranks had to wait for cores.
  void record_host_load(std::int64_t run_id, const std::string& label) {
    const HostLoad load = host_load_between(cpu_at_start_, sample_cpu(), ranks_here_, host_cores());
    if (!load.known) return;
    writes_.fact(run_id, "host_other_cores", reports::fixed(load.other_cores, 2));
    writes_.fact(run_id, "host_steal_cores", reports::fixed(load.steal_cores, 2));
    writes_.fact(run_id, "host_demand", reports::fixed(load.demand, 2));
    writes_.fact(run_id, "host_busy", load.busy ? "true" : "false");
    if (load.busy && !args_.quiet)
      std::cout << label << ": warning: the host was busier than its " << host_cores() << " cores (" << ranks_here_
                << " ranks + " << reports::fixed(load.other_cores, 2) << " cores of other processes"
                << (load.steal_cores >= 0.01 ? " + " + reports::fixed(load.steal_cores, 2) + " stolen" : "")
                << "): its times measure that too, and reports widen their noise for it" << std::endl;
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
    if (row->status == storage::RunStatus::Diverged) {  // a result: running it again would diverge again
      run.done = id;
      run.done_as = "diverged";
      return;
    }
    if (row->status == storage::RunStatus::Running && !row->stale) {
      run.done = id;
      run.done_as = str_cat("running under controller ", row->controller_pid, " on ", row->host);
      return;
    }
    // Inside the plan's transaction, which the caller retries as a whole.
    if (row->status == storage::RunStatus::Running)
      recorder_.finish_run(*id, storage::RunStatus::Failed,
                           "its controller stopped without ending it (stale heartbeat)");
    // Continued in place, never duplicated: from its newest complete checkpoint, else from the
    // start (its rows are cleared first). Its id stays, attempts counts the tries.
    run.id = *id;
    run.attempts = row->attempts;
    const int world = catalog_.world_size(plan_.runs[run.index]);
    if (row->checkpoint_step && has_checkpoints(checkpoint_dir(args_.db, *id), *row->checkpoint_step, world))
      run.resume_step = *row->checkpoint_step;
    else
      run.again = row->status != storage::RunStatus::Queued || row->attempts > 0;
  }
  int report() const {
    std::cout << plan_.name << ": " << position_ << " runs, " << finished_ << " finished, " << failed_ << " failed, "
              << diverged_ << " diverged, " << skipped_ << " skipped" << (interrupted_ ? ", interrupted" : "")
              << (gave_up_ ? ", stopped: the database took no writes" : "")
              << (rank_lost() ? ", stopped: a rank is gone" : "") << " (database " << args_.db << ")\n";
    if (rank_lost()) {
      std::cout << plan_.name << ": " << sweep_->remote().lost << "; the runs not started stay QUEUED (launch "
                << "again with `laconic run --resume " << args_.file << " --db " << args_.db << "` to run them)\n";
      return 1;
    }
    if (gave_up_) return 1;
    if (interrupted_) return 130;
    return failed_ > 0 ? 1 : 0;
  }

 private:
  void execute_one(const PlannedRun& run, std::size_t total) {
    const RunConfig& config = plan_.runs[run.index];
    const std::string label = str_cat("[", ++position_, "/", offset_ + total, "] ", plan_.name, " ", run.recorded.name);
    if (position_ == offset_ + total) offset_ = position_;
    if (run.done) {
      std::cout << label << ": already " << run.done_as << " as run " << *run.done << ", skipped\n";
      ++skipped_;
      return;
    }
    if (gave_up_ || rank_lost()) return;  // the run stays QUEUED for --resume
    if (interrupted_) {
      try {
        recorder_.finish_run(run.id, storage::RunStatus::Killed, "not started: interrupted");
      } catch (const StorageError& e) {
        if (!storage::is_transient(e)) throw;  // else it stays QUEUED, which --resume runs too
      }
      return;
    }
    std::unique_ptr<storage::SqliteSink> stored;
    std::optional<storage::Journal::Status> ending;
    try {
      execute_claimed(run, config, label, stored, ending);
    } catch (const GaveUpOnDatabase& e) {
      give_up(e.what(), run.id, stored.get(), ending);
    }
  }

  // Runs one run once it is known to need running; `stored` and `ending` are left with what a
  // recovery journal needs when the database gives out.
  void execute_claimed(const PlannedRun& run, const RunConfig& config, const std::string& label,
                       std::unique_ptr<storage::SqliteSink>& stored, std::optional<storage::Journal::Status>& ending) {
    const int world = catalog_.world_size(config);
    const auto checkpoints = checkpoint_dir(args_.db, run.id);
    const std::string not_checkpointable = catalog_.why_not_checkpointed(config);
    const bool checkpointing = (args_.checkpoint_every > 0 && not_checkpointable.empty()) || run.resume_step >= 0;
    if (args_.checkpoint_every > 0 && !not_checkpointable.empty() && run.resume_step < 0)
      std::cout << label << ": not checkpointed: " << not_checkpointable << "\n";
    // Claimed first, as it was planned: a second controller on the same database may have taken
    // it (RUNNING) or trained it (FINISHED, FAILED, ...) since.
    bool claimed = false;
    writes_.retry(str_cat("start run ", run.id), [&] { claimed = recorder_.start_run(run.id, run.attempts); });
    if (!claimed) {
      const auto now = storage::find_run(db_, run.id);
      std::cout << label << ": run " << run.id << " was taken by another controller since it was planned (now "
                << (now ? now->status_label() : std::string("gone")) << "), skipped" << std::endl;
      ++skipped_;
      return;
    }
    // From here on the run is RUNNING in the database: if the database gives out, its ending
    // goes to the journal (replaced below by how it really ended).
    ending = storage::Journal::Status{run.id, "KILLED", storage::unix_now(),
                                      "stopped: the database took no writes (--db-retry)"};
    if (run.resume_step >= 0) {
      std::cout << label << ": resuming run " << run.id << " at step " << run.resume_step << "\n";
      writes_.retry(str_cat("rewind run ", run.id), [&] { recorder_.rewind_run(run.id, run.resume_step); });
    } else if (run.again) {
      std::cout << label << ": running run " << run.id << " again from the start (no checkpoint to resume)\n";
      writes_.retry(str_cat("rewind run ", run.id), [&] { recorder_.rewind_run(run.id, 0); });
      std::error_code ignored;
      std::filesystem::remove_all(checkpoints, ignored);
    }
    if (checkpointing) std::filesystem::create_directories(checkpoints);
    record_host_facts(run.id, world, label);
    if (!args_.overrides.empty()) {
      std::string overrides;
      for (const auto& o : args_.overrides) overrides += (overrides.empty() ? "" : " ") + o;
      writes_.fact(run.id, "overrides", overrides);
    }
    // The data is read here, once for the sweep, and the forked workers share it.
    try {
      if (const auto seconds = catalog_.preload_data(config))
        writes_.fact(run.id, "seconds_preload", str_cat(*seconds));
    } catch (const std::exception&) {
      // Every worker reads it again, and the run fails with their words for what is wrong.
    }
    writes_.retry(str_cat("open the metrics of run ", run.id), [&] { stored = recorder_.retrying_sink(run.id); });
    LaunchOutcome outcome;
    // An emulated link is built for the run and torn down when it ends, however its workers end.
    std::optional<EmulatedNetwork> network;
    const auto link = catalog_.emulated_link(config);
    if (link) {
      try {
        network.emplace(run.id, world, link->bits_per_second, link->latency_seconds);
        writes_.fact(run.id, "network_emulation", network->description());
      } catch (const std::exception& e) {
        outcome.error = e.what();
      }
    }
    if (outcome.error.empty()) {
      // Worker 0's evaluations also go to the progress display.
      EvaluationTap tap(*stored, [&](const MetricRecord& m) { progress_.evaluated(m.epoch, m.key, m.value); });
      // Workers expand the file themselves: they are told the plan's index and name.
      LaunchSpec spec{args_.executable, args_.file,      plan_.file_hash, run.index,
                      config.name,      args_.overrides, world,           config.timeout};
      if (checkpointing) {
        spec.checkpoint_dir = checkpoints.string();
        spec.checkpoint_every = args_.checkpoint_every;
        spec.resume_step = run.resume_step;
      }
      if (sweep_) {
        spec.remote = &sweep_->remote();
        spec.rendezvous_prefix = sweep_->rendezvous_prefix(run.id);
      }
      // Workers are forks of this process, which has LibTorch loaded already.
      spec.in_fork = [&](int rank, const std::string& store, int message_fd) {
        WorkerArgs worker;
        worker.file = spec.file;
        worker.file_hash = spec.file_hash;
        worker.run_index = spec.run_index;
        worker.run_name = spec.run_name;
        worker.overrides = spec.overrides;
        worker.rank = rank;
        worker.world = spec.workers;
        worker.store = store;
        worker.message_fd = message_fd;
        worker.checkpoint_dir = spec.checkpoint_dir;
        worker.checkpoint_every = spec.checkpoint_every;
        worker.resume_step = spec.resume_step;
        if (sweep_) {
          worker.store = sweep_->launched().store.text();
          worker.store_prefix = store;
          worker.hostname = sweep_->address();
          worker.interface = sweep_->launched().interface;
        }
        if (network) {
          worker.netns = network->rank(rank).netns;
          worker.hostname = network->rank(rank).address;
          worker.message_delay = network->latency_by_netem() ? 0.0 : link->latency_seconds;
        }
        return worker_command(worker);
      };
      progress_.begin(label, config.epochs);
      LaunchObserver observer;
      observer.on_progress = [&](const ProgressMessage& p) { progress_.update(p); };
      observer.on_wait = [&](const std::string& waiting_on) { progress_.waiting(waiting_on); };
      observer.on_fact = [&](const std::string& key, const std::string& value) { writes_.fact(run.id, key, value); };
      // Every few seconds: commit what arrived (a controller crash then loses at most that much)
      // and show readers that the run and its workers are alive. A database that cannot take
      // writes keeps the rows in the sink; the heartbeat is only a sign of life, and waits.
      observer.on_tick = [&](double workers_silent) {
        stored->flush();
        const bool facts_written = writes_.flush_facts();
        if (stored->outage_seconds() > 0)
          writes_.outage_started(str_cat("write the metrics of run ", run.id), stored->last_error());
        else if (facts_written)
          writes_.outage_over();
        try {
          recorder_.heartbeat(run.id, workers_silent);
        } catch (const StorageError& e) {
          if (!storage::is_transient(e)) throw;
        }
      };
      observer.stop_reason = [&]() -> std::string {
        if (stored->outage_seconds() <= args_.db_retry) return "";
        return str_cat("database ", args_.db, " took no writes for ", static_cast<long>(args_.db_retry),
                       " s (--db-retry): ",
                       storage::explain_storage_error(stored->last_error_code(), stored->last_error(), args_.db));
      };
      observer.hold_input = [&] { return stored->pending() > kMaxPendingRows; };
      // Commit every step before the checkpoint, then say it may be resumed from. While the
      // database lags, the checkpoint is kept but not declared: an older one stays the newest.
      observer.on_checkpoint = [&](std::int64_t step) {
        stored->flush();
        if (stored->pending() > 0) return;
        try {
          recorder_.record_checkpoint(run.id, step);
          remove_older_checkpoints(checkpoints, step);
        } catch (const StorageError& e) {
          if (!storage::is_transient(e)) throw;
        }
      };
      try {
        outcome = launch_workers(spec, tap, observer, stop_);
      } catch (const GaveUpOnDatabase&) {
        throw;
      } catch (const Error& e) {
        outcome.error = e.what();
      }
      progress_.end();
    }
    const auto status = outcome.ok                                        ? storage::RunStatus::Finished
                        : outcome.diverged                                ? storage::RunStatus::Diverged
                        : outcome.interrupted || !outcome.stopped.empty() ? storage::RunStatus::Killed
                                                                          : storage::RunStatus::Failed;
    ending = storage::Journal::Status{run.id, storage::to_string(status), storage::unix_now(),
                                      outcome.ok ? std::string() : outcome.error};
    if (!outcome.stopped.empty()) throw GaveUpOnDatabase(outcome.stopped);
    // Every row the workers sent is committed before the status says the run is over.
    writes_.drain(*stored);
    writes_.fact(run.id, "load_end", load_average_text());
    record_host_load(run.id, label);
    if (outcome.total_seconds > 0) {
      writes_.fact(run.id, "seconds_process_start", str_cat(outcome.start_seconds));
      writes_.fact(run.id, "seconds_teardown", str_cat(outcome.teardown_seconds));
      writes_.fact(run.id, "seconds_launch", str_cat(outcome.total_seconds));
    }
    writes_.write_facts();
    if (outcome.ok || outcome.diverged) {
      // Both are results: --resume skips them, so their checkpoints will never be used.
      std::error_code ignored;
      std::filesystem::remove_all(checkpoints, ignored);
    }
    writes_.retry(str_cat("end run ", run.id), [&] { recorder_.finish_run(run.id, status, ending->error); });
    if (outcome.ok)
      ++finished_;
    else if (outcome.diverged)
      ++diverged_;
    else if (outcome.interrupted)
      interrupted_ = true;
    else
      ++failed_;
    std::cout << label << ": " << result_line(db_, run.id) << std::endl;
  }

  // The database took no writes for --db-retry seconds: what is pending goes to a recovery
  // journal, and the sweep stops (the runs not started stay QUEUED, for --resume).
  bool rank_lost() const { return sweep_ && !sweep_->remote().lost.empty(); }

  void give_up(const std::string& why, std::int64_t run_id, storage::SqliteSink* stored,
               const std::optional<storage::Journal::Status>& ending) {
    gave_up_ = true;
    progress_.clear();
    std::cerr << "laconic: " << why << "\n";
    const std::size_t rows = stored ? stored->pending() : 0;
    std::vector<storage::Journal::Status> statuses;
    if (ending) statuses.push_back(*ending);  // a run never started stays QUEUED
    const std::string path = writes_.write_journal(stored, statuses);
    if (path.empty()) {
      std::cerr << "laconic: nothing was pending, nothing is lost. Stopping the sweep: runs not started stay "
                   "QUEUED; `laconic run --resume "
                << args_.file << " --db " << args_.db << "` continues once the database takes writes" << std::endl;
      return;
    }
    std::cerr << "laconic: wrote what the database could not take (" << rows << " metric rows"
              << (ending ? str_cat(", run ", run_id, " ending ", ending->status) : std::string()) << ")"
              << " to the recovery journal " << path << "; once the database takes writes again, replay it with "
              << "`laconic recover " << path << "` (or `laconic run --resume " << args_.file << " --db " << args_.db
              << "`, which replays it first). Stopping the sweep: runs not started stay QUEUED." << std::endl;
  }

  const RunArgs& args_;
  const std::atomic<bool>& stop_;
  const lua::ExperimentPlan& plan_;
  const engine::EngineCatalog& catalog_;
  storage::Database& db_;
  storage::Recorder& recorder_;
  std::int64_t experiment_id_;
  LaunchedSweep* sweep_;  // the other ranks, when a launcher started this process as rank 0
  Progress progress_;
  int finished_ = 0, failed_ = 0, skipped_ = 0, diverged_ = 0;
  std::size_t position_ = 0, offset_ = 0;
  bool interrupted_ = false;
  bool gave_up_ = false;
  DurableWrites writes_;
  int ranks_here_ = 1;        // the run's ranks on this host (with --jobs, every job's)
  CpuSample cpu_at_start_{};  // when the run's host facts were recorded
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
std::string key_without(const RunConfig& run, const std::vector<std::string>& drop, bool keep_only_drop) {
  nlohmann::json key = nlohmann::json::object();
  for (const auto& [name, value] : run.swept) {
    const bool listed = std::find(drop.begin(), drop.end(), name) != drop.end();
    if (name == "seed" || listed != keep_only_drop) continue;
    key[name] = value_to_json(value);
  }
  return key.dump();
}

/// Forks `args.jobs` controllers, job i pinned to `ranks` cores of its own from core i x ranks
/// (modulo the host's), each running run_command on every jobs-th run; waits for all of them.
int run_jobs(const RunArgs& args, const std::atomic<bool>& stop, int ranks) {
  const int cores = host_cores();
  std::vector<pid_t> children;
  std::cout.flush();
  for (int job = 0; job < args.jobs; ++job) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(str_cat("cannot start job ", job, ": ", std::strerror(errno)));
    if (pid == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int k = 0; k < ranks; ++k) CPU_SET((job * ranks + k) % cores, &set);
      ::sched_setaffinity(0, sizeof set, &set);
      RunArgs mine = args;
      mine.job_index = job;
      int status = 1;
      try {
        status = run_command(mine, stop);
      } catch (const ConfigError& e) {
        std::cerr << "laconic: job " << job << ": " << e.what() << "\n";
        status = 2;
      } catch (const std::exception& e) {
        std::cerr << "laconic: job " << job << ": " << e.what() << "\n";
      }
      std::cout.flush();
      std::cerr.flush();
      ::_exit(status);
    }
    children.push_back(pid);
  }
  int worst = 0;
  std::string statuses;
  for (const pid_t pid : children) {
    int raw = 0;
    while (::waitpid(pid, &raw, 0) < 0 && errno == EINTR) {}
    const int status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    statuses += (statuses.empty() ? "" : ", ") + std::to_string(status);
    worst = status == 130 || worst == 130 ? 130 : std::max(worst, status);
  }
  std::cout << "laconic: " << args.jobs << " jobs ended (exit statuses " << statuses << "; database " << args.db << ")"
            << std::endl;
  return worst;
}

/// The runs of share I of `shard` ("I/N", 0 <= I < N): every N-th of `selected` from the I-th,
/// in plan order; all of them for "". ConfigError for anything else.
std::vector<std::size_t> take_shard(const std::vector<std::size_t>& selected, const std::string& shard) {
  if (shard.empty()) return selected;
  const auto slash = shard.find('/');
  std::size_t index = 0, count = 0;
  try {
    std::size_t used_i = 0, used_n = 0;
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    index = std::stoul(shard.substr(0, slash), &used_i);
    count = std::stoul(shard.substr(slash + 1), &used_n);
    if (used_i != slash || used_n != shard.size() - slash - 1) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    count = 0;
  }
  if (count == 0 || index >= count || shard.front() == '-')
    throw ConfigError(str_cat("--shard must be I/N with 0 <= I < N (\"0/4\" to \"3/4\"), got \"", shard, "\""));
  std::vector<std::size_t> mine;
  for (std::size_t k = index; k < selected.size(); k += count) mine.push_back(selected[k]);
  return mine;
}

}  // namespace

int run_command(const RunArgs& args, const std::atomic<bool>& stop) {
  // The controller computes nothing itself; pinned, it starts no thread pool its forks (the
  // workers) would inherit broken.
  train::pin_threads(1);
  engine::EngineCatalog catalog;
  // Load and validate everything before the database is touched: a broken file records nothing.
  lua::LoadOptions load_options;
  load_options.overrides = args.overrides;
  const auto plan = lua::load_experiment(args.file, catalog, load_options);
  if (!args.shard.empty() && plan.tune)
    throw ConfigError(
        "--shard cannot split a tuned experiment (tune = {...}): its final runs need every trial's "
        "result; run it on one machine");
  if (args.jobs > 1 && plan.tune)
    throw ConfigError(
        "--jobs cannot split a tuned experiment (tune = {...}): its final runs need every trial's "
        "result");
  std::vector<std::size_t> selected = take_shard(select_runs(plan, args.file, args.only), args.shard);
  if (args.job_index >= 0) selected = take_shard(selected, str_cat(args.job_index, "/", args.jobs));
  const bool forks_jobs = args.jobs > 1 && args.job_index < 0;
  int job_ranks = 1;
  if (forks_jobs) {
    for (std::size_t i : selected) job_ranks = std::max(job_ranks, catalog.world_size(plan.runs[i]));
    const int cores = host_cores();
    if (args.jobs * job_ranks > cores && !args.oversubscribe)
      throw ConfigError(str_cat("--jobs ", args.jobs, " x ", job_ranks, " ranks per run = ", args.jobs * job_ranks,
                                " ranks on ", cores,
                                " cores: they would take turns and measure each other; lower "
                                "--jobs, or add --oversubscribe"));
  }
  check_runs(catalog, plan, selected);
  std::optional<RankHello> mine;
  if (args.launched) {
    check_launchable(args, *args.launched, plan, catalog, selected);
    mine = own_hello(*args.launched, plan, catalog, selected);
    if (args.launched->rank > 0) return follow_rank0(args, *args.launched, plan, catalog, *mine, stop);
  }
  for (std::size_t i : selected)
    if (catalog.emulated_link(plan.runs[i]))
      if (const std::string why = why_no_emulation(); !why.empty())
        throw ConfigError(str_cat("run ", i + 1, " (", plan.runs[i].name, "): ", why, "; or set emulate = false"));
  for (const auto& dir : remove_stale_store_dirs())
    std::cout << "laconic: removed " << dir << ", the rendezvous directory of a controller that died\n";
  for (const auto& name : remove_stale_namespaces())
    std::cout << "laconic: removed network namespace " << name << ", of an emulated link whose controller died\n";
  const bool existed = args.db != ":memory:" && std::filesystem::exists(args.db);
  auto db = storage::Database::open(args.db);
  // A damaged file is found now, before anything trains into it.
  if (existed) db->check_integrity();
  // Every write of the controller is retried (DurableWrites, a KeepAndRetry sink), so it need not
  // wait on another process's lock: waiting, it would stop reading the workers' pipes, and a long
  // lock would stall their training until Gloo's timeout failed the run. Rows wait in memory.
  db->set_busy_timeout(kControllerBusyTimeoutMs);
  if (args.resume) replay_journals(*db, args.db);
  if (args.resume && !args.force) check_unchanged(*db, plan, args.file);
  // Rank 0 of a launch: the database is known to open before the other ranks are kept waiting.
  std::unique_ptr<LaunchedSweep> sweep;
  if (args.launched) sweep = std::make_unique<LaunchedSweep>(args, *args.launched, *mine, stop);
  const auto finish = [&](int status) {
    if (sweep) sweep->finish(status);
    return status;
  };
  if (forks_jobs) {
    // Recorded once, before the jobs race to record it; then each job opens the database itself.
    storage::Recorder(*db).add_experiment(plan.name, args.file, plan.file_hash, read_text(args.file));
    db.reset();
    return run_jobs(args, stop, job_ranks);
  }
  storage::Recorder recorder(*db);
  const auto experiment_id = recorder.add_experiment(plan.name, args.file, plan.file_hash, read_text(args.file));
  Executor executor(args, stop, plan, catalog, *db, recorder, experiment_id, sweep.get());

  if (!plan.tune) {
    std::vector<PlannedRun> runs;
    for (std::size_t i : selected) runs.push_back({i, plan.runs[i]});
    executor.execute(runs);
    return finish(executor.report());
  }

  // Tuning: every trial of every configuration on the first seed, then the best trial of each
  // configuration on every seed (Harris 2020: tune each method on its own).
  const auto& tune = *plan.tune;
  const std::int64_t tuning_seed = plan.runs.front().seed;
  std::vector<PlannedRun> trials;
  for (std::size_t i : selected)
    if (plan.runs[i].seed == tuning_seed) trials.push_back({i, tuned(plan.runs[i], "trial")});
  std::cout << plan.name << ": tuning " << tune.metric << " (" << tune.goal << ") over " << tune.trials
            << " trials per configuration on seed " << tuning_seed << "\n";
  executor.execute(trials);
  if (executor.interrupted()) return finish(executor.report());
  std::map<std::string, std::pair<double, std::string>> best;  // configuration -> metric, trial
  for (const PlannedRun& trial : trials) {
    const double value = executor.final_metric(trial, tune.metric);
    if (std::isnan(value)) continue;
    const std::string config = key_without(plan.runs[trial.index], tune.drawn, false);
    auto it = best.find(config);
    const bool better = it == best.end() || (tune.goal == "max" ? value > it->second.first : value < it->second.first);
    if (better) best[config] = {value, key_without(plan.runs[trial.index], tune.drawn, true)};
  }
  std::vector<PlannedRun> finals;
  for (std::size_t i : selected) {
    auto it = best.find(key_without(plan.runs[i], tune.drawn, false));
    if (it != best.end() && it->second.second == key_without(plan.runs[i], tune.drawn, true))
      finals.push_back({i, tuned(plan.runs[i], "best")});
  }
  for (const auto& [config, choice] : best)
    std::cout << "  best " << tune.metric << " " << choice.first << " for " << config << " with " << choice.second
              << "\n";
  executor.execute(finals);
  return finish(executor.report());
}

}  // namespace laconic::cli
