#include "controller/sweep_executor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>

#include "controller/emulated_network.hpp"
#include "controller/worker_command.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/train/checkpoint_files.hpp"
#include "reports/format.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"

namespace laconic::controller {
namespace {

/// Removes the files of checkpoints older than `step` (the newest complete one is kept).
void remove_older_checkpoints(const std::filesystem::path& dir, std::int64_t step) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const auto saved = train::checkpoint_step_of(entry.path().filename().string());
    if (saved && *saved < step) std::filesystem::remove(entry.path(), error);
  }
}

// Passes every record on, and shows worker 0's test metric (`key`: the resolved run's) to
// `on_evaluation` on the way.
class EvaluationTap : public MetricsSink {
 public:
  EvaluationTap(MetricsSink& inner, std::string key, std::function<void(const MetricRecord&)> on_evaluation)
      : inner_(inner), key_(std::move(key)), on_evaluation_(std::move(on_evaluation)) {}
  void record(const MetricRecord& m) override {
    inner_.record(m);
    if (m.worker == 0 && m.key == key_) on_evaluation_(m);
  }
  void flush() override { inner_.flush(); }

 private:
  MetricsSink& inner_;
  std::string key_;
  std::function<void(const MetricRecord&)> on_evaluation_;
};

storage::RunStatus status_of(LaunchEnding ending) {
  switch (ending) {
    case LaunchEnding::Finished:
    case LaunchEnding::Dropped:  // a result, ended early
      return storage::RunStatus::Finished;
    case LaunchEnding::Diverged:
      return storage::RunStatus::Diverged;
    case LaunchEnding::Interrupted:
    case LaunchEnding::Stopped:
      return storage::RunStatus::Killed;
    case LaunchEnding::Failed:
      break;
  }
  return storage::RunStatus::Failed;
}

// An emulated cluster's islands, rank by rank, for EmulatedNetwork; nothing for one link.
std::optional<EmulatedIslands> emulated_islands(const std::optional<ResolvedIslands>& islands, int world) {
  if (!islands) return std::nullopt;
  EmulatedIslands out{{}, islands->between.bits_per_second, islands->between.latency_seconds};
  for (std::size_t i = 0; i < islands->sizes.size(); ++i)
    out.island_of_rank.insert(out.island_of_rank.end(), static_cast<std::size_t>(islands->sizes[i]), static_cast<int>(i));
  if (static_cast<int>(out.island_of_rank.size()) != world) return std::nullopt;  // refused when the run was checked
  return out;
}

}  // namespace

SweepExecutor::SweepExecutor(const SweepOptions& args, const std::atomic<bool>& stop, const lua::ExperimentPlan& plan,
                             RunCallbacks* callbacks, const engine::EngineCatalog& catalog, storage::Database& db,
                             storage::Recorder& recorder, std::int64_t experiment_id, LaunchedSweep* sweep)
    : args_(args),
      stop_(stop),
      plan_(plan),
      callbacks_(callbacks),
      catalog_(catalog),
      db_(db),
      recorder_(recorder),
      experiment_id_(experiment_id),
      sweep_(sweep),
      // Jobs share one terminal, and a launcher's ranks write to a log even when it hands them a
      // pty (Open MPI does): whole lines there.
      progress_((args.job_index >= 0 || args.launched) && !args.quiet ? ProgressMode::Log
                                                                      : progress_mode_for(stdout, args.quiet),
                stdout, args.progress_every),
      writes_(recorder, args.db, args.db_retry, &stop),
      pending_writes_(db, recorder, writes_, args.db) {}

void SweepExecutor::execute(std::vector<PlannedRun>& runs) {
  SweepPlanner planner(args_, plan_, catalog_, db_, recorder_, experiment_id_);
  writes_.retry("record the plan", [&] { planner.record(runs); });
  std::size_t to_train = 0;
  for (const PlannedRun& run : runs) to_train += run.start == PlannedRun::Start::Skip ? 0 : 1;
  progress_.clock().add_runs(to_train);
  for (const PlannedRun& run : runs) execute_one(run, runs.size());
  finish_deferred();
}

double SweepExecutor::final_metric(const PlannedRun& run, const std::string& metric) {
  const auto row = storage::find_run(db_, run.id);
  if (!row || row->status != storage::RunStatus::Finished) return std::nan("");
  const auto summary = storage::summary_of(db_, run.id);
  const auto it = summary.find(metric);
  return it == summary.end() ? std::nan("") : it->second.last;
}

/// The controller's facts about the host of a run (its ranks' own come from rank 0), and a
/// warning when the ranks outnumber the cores.
void SweepExecutor::record_host_facts(std::int64_t run_id, const ResolvedRun& resolved, const std::string& label) {
  const int cores = host_cores();
  writes_.fact(run_id, ResolvedRun::kFact, resolved.to_json());
  const int world = resolved.world_size;
  // With --jobs, the other jobs' runs share the host too; a launcher spreads them over hosts.
  const int ranks = sweep_ ? sweep_->ranks_here() : world * (args_.job_index >= 0 ? args_.jobs : 1);
  // Thread ranks are timed on their threads' CPU time: sharing cores is their design, and takes
  // nothing from what they measure (engine/core/rank_clock.hpp).
  const bool threads = resolved.thread_ranks();
  const bool oversubscribed = sweep_ ? sweep_->oversubscribed() : ranks > cores && !threads;
  writes_.fact(run_id, storage::fact::kRankClock,
               storage::rank_clock_text(threads ? storage::RankClock::ThreadCpu : storage::RankClock::Wall));
  // What paths the run's configuration holds relatively (files relative to an experiment given
  // as a relative path) are relative to: reports read a hardware profile through it.
  writes_.fact(run_id, storage::fact::kWorkingDirectory, std::filesystem::current_path().string());
  if (sweep_) {
    writes_.fact(run_id, storage::fact::kLauncher, sweep_->launched().description);
    writes_.fact(run_id, storage::fact::kHosts, sweep_->hosts());
  }
  writes_.fact(run_id, storage::fact::kCores, std::to_string(cores));
  writes_.fact(run_id, storage::fact::kRanksOnHost, std::to_string(ranks));
  writes_.fact(run_id, storage::fact::kOversubscribed, storage::fact_flag_text(oversubscribed));
  writes_.fact(run_id, "load_start", load_average_text());
  writes_.fact(run_id, "cpu_affinity", affinity_text());
  ranks_here_ = threads ? std::min(ranks, cores) : ranks;  // thread ranks fill the cores, no more
  cpu_at_start_ = sample_cpu();
  if (oversubscribed && !args_.quiet)
    std::cout << label << ": warning: " << ranks << " ranks on " << cores
              << " cores: they take turns, so its times measure contention as well as the method" << std::endl;
}

/// How busy the host was since record_host_facts(): the cores other processes and the
/// hypervisor took, and a warning when the ranks had to wait for cores.
void SweepExecutor::record_host_load(std::int64_t run_id, const std::string& label) {
  const HostLoad load = host_load_between(cpu_at_start_, sample_cpu(), ranks_here_, host_cores());
  if (!load.known) return;
  writes_.fact(run_id, "host_other_cores", reports::fixed(load.other_cores, 2));
  writes_.fact(run_id, "host_steal_cores", reports::fixed(load.steal_cores, 2));
  writes_.fact(run_id, storage::fact::kHostDemand, reports::fixed(load.demand, 2));
  writes_.fact(run_id, "host_busy", storage::fact_flag_text(load.busy));
  if (load.busy && !args_.quiet)
    std::cout << label << ": warning: the host was busier than its " << host_cores() << " cores (" << ranks_here_
              << " ranks + " << reports::fixed(load.other_cores, 2) << " cores of other processes"
              << (load.steal_cores >= 0.01 ? " + " + reports::fixed(load.steal_cores, 2) + " stolen" : "")
              << "): its times measure that too, and reports widen their noise for it" << std::endl;
}

int SweepExecutor::report() const {
  std::cout << plan_.name << ": " << position_ << " runs, " << finished_ << " finished, " << failed_ << " failed, "
            << diverged_ << " diverged, " << skipped_ << " skipped" << (interrupted_ ? ", interrupted" : "")
            << (gave_up_ ? (stop_ ? ", stopped by a signal while the database took no writes"
                                  : ", stopped: the database took no writes")
                         : "")
            << (rank_lost() ? not_started_for_lost_rank_ > 0 ? ", stopped: a rank is gone" : ", a rank is gone" : "")
            << " (database " << args_.db << ")\n";
  // An elastic run may go on without the rank and finish: the sweep failed only if runs were left.
  if (rank_lost() && not_started_for_lost_rank_ == 0)
    std::cout << plan_.name << ": " << sweep_->remote().lost << "; every run had started\n";
  if (rank_lost() && not_started_for_lost_rank_ > 0) {
    std::cout << plan_.name << ": " << sweep_->remote().lost << "; the runs not started stay QUEUED (launch "
              << "again with `" << resume_command(args_) << "` to run them)\n";
    return 1;
  }
  if (gave_up_) return 1;
  if (interrupted_) {
    if (args_.resume_hint)
      std::cout << plan_.name << ": the runs not finished are marked KILLED"
                << (left_queued_ > 0 ? str_cat(", but for ", left_queued_, " not started that the locked database "
                                               "kept QUEUED")
                                     : std::string())
                << "; `" << resume_command(args_) << "` continues them (from their checkpoints where they have one)\n";
    return 130;
  }
  return failed_ > 0 ? 1 : 0;
}

void SweepExecutor::execute_one(const PlannedRun& run, std::size_t total) {
  const RunConfig& config = plan_.runs[run.index];
  const std::string label = str_cat("[", ++position_, "/", offset_ + total, "] ", plan_.name, " ", run.recorded.name);
  if (position_ == offset_ + total) offset_ = position_;
  if (run.start == PlannedRun::Start::Skip) {
    std::cout << label << ": already " << run.skipped_as << " as run " << run.id << ", skipped\n";
    ++skipped_;
    return;
  }
  if (gave_up_ || rank_lost()) {  // the run stays QUEUED for --resume
    not_started_for_lost_rank_ += rank_lost() ? 1 : 0;
    return;
  }
  if (interrupted_) {
    try {
      recorder_.finish_run(run.id, storage::RunStatus::Killed, "not started: interrupted");
    } catch (const StorageError& e) {
      if (!storage::is_transient(e)) throw;  // else it stays QUEUED, which --resume runs too
      ++left_queued_;
    }
    return;
  }
  RunWrites pending;
  pending.run_id = run.id;
  pending.label = label;
  try {
    execute_claimed(run, config, pending);
  } catch (const GaveUpOnDatabase& e) {
    give_up(e.what(), pending);
  }
}

// Runs one run once it is known to need running; `pending` is left with what a recovery
// journal needs when the database gives out.
void SweepExecutor::execute_claimed(const PlannedRun& run, const RunConfig& config, RunWrites& pending) {
  write_now(pending);  // what ended during a lock lands before the next claim, where it can
  if (!claim(run, pending)) return;
  // From here on the run is RUNNING in the database (or will be, once its claim is written): if
  // the database gives out, its ending goes to the journal (replaced in conclude() by how it
  // really ended).
  pending.ending = storage::Journal::Status{run.id, "KILLED", storage::unix_now(),
                                            "stopped: the database took no writes (--db-retry)"};
  // Resolved once: its ranks and their placement, what its compressor is (recorded as a fact).
  const ResolvedRun resolved = catalog_.resolve_run(config);
  const Checkpoints checkpoints = prepare(run, config, resolved, pending);
  const LaunchOutcome outcome = launch(run, config, resolved, checkpoints, pending);
  conclude(outcome, pending);
}

// Rewinds a resumed or repeated run, tidies its checkpoints, records its host's facts, reads its
// data once for the forked workers, and opens its metrics' sink (pending.stored).
SweepExecutor::Checkpoints SweepExecutor::prepare(const PlannedRun& run, const RunConfig& config,
                                                  const ResolvedRun& resolved, RunWrites& pending) {
  const std::string& label = pending.label;
  // A run trained before its claim is written rewinds once it is claimed.
  const auto rewind = [&](std::int64_t step) {
    if (pending.claim)
      pending.rewind_to = step;
    else
      writes_.retry(str_cat("rewind run ", run.id), [&] { recorder_.rewind_run(run.id, step); });
  };
  const std::string not_checkpointable = catalog_.why_not_checkpointed(config);
  const bool resumes = run.start == PlannedRun::Start::Resume;
  const Checkpoints checkpoints{checkpoint_dir(args_.db, run.id),
                                (args_.checkpoint_every > 0 && not_checkpointable.empty()) || resumes};
  if (args_.checkpoint_every > 0 && !not_checkpointable.empty() && !resumes)
    std::cout << label << ": not checkpointed: " << not_checkpointable << "\n";
  if (resumes) {
    std::cout << label << ": resuming run " << run.id << " at step " << run.resume_step << "\n";
    rewind(run.resume_step);
  } else if (run.start == PlannedRun::Start::Again) {
    std::cout << label << ": running run " << run.id << " again from the start (no checkpoint to resume)\n";
    rewind(0);
    std::error_code ignored;
    std::filesystem::remove_all(checkpoints.dir, ignored);
  }
  if (checkpoints.on) std::filesystem::create_directories(checkpoints.dir);
  record_host_facts(run.id, resolved, label);
  if (!args_.overrides.empty()) {
    std::string overrides;
    for (const auto& o : args_.overrides) overrides += (overrides.empty() ? "" : " ") + o;
    writes_.fact(run.id, storage::fact::kOverrides, overrides);
  }
  // The data is read here, once for the sweep, and the forked workers share it.
  try {
    if (const auto seconds = catalog_.preload_data(config)) writes_.fact(run.id, "seconds_preload", str_cat(*seconds));
  } catch (const std::exception&) {
    // Every worker reads it again, and the run fails with their words for what is wrong.
  }
  writes_.retry(
      str_cat("open the metrics of run ", run.id), [&] { pending.stored = recorder_.retrying_sink(run.id); }, false);
  pending.stored->hold(pending.claim.has_value());  // its rows wait for its claim
  return checkpoints;
}

// What every rank of the run is told: its place in the plan (an exec'd worker expands the file
// itself and checks it), its world, its checkpoints, and for a launched sweep the store its
// ranks meet in.
WorkerArgs SweepExecutor::worker_args(const PlannedRun& run, const RunConfig& config, const ResolvedRun& resolved,
                                      const Checkpoints& checkpoints) const {
  WorkerArgs worker;
  worker.file = args_.file;
  worker.file_hash = plan_.file_hash;
  worker.order = {run.index, config.name, "", resolved};
  worker.overrides = args_.overrides;
  if (checkpoints.on) {
    worker.checkpoint_dir = checkpoints.dir.string();
    worker.checkpoint_every = args_.checkpoint_every;
    worker.resume_step = run.resume_step;
  }
  if (sweep_) {
    worker.store = sweep_->launched().store.text();
    worker.order.store_prefix = sweep_->rendezvous_prefix(run.id);
    worker.hostname = sweep_->address();
    worker.interface = sweep_->launched().interface;
  }
  return worker;
}

// Starts the run's workers (forks of this process, which has LibTorch loaded already) on its
// emulated link when it has one, built for the run and torn down when it ends, and supervises
// them until every one has exited.
LaunchOutcome SweepExecutor::launch(const PlannedRun& run, const RunConfig& config, const ResolvedRun& resolved,
                                    const Checkpoints& checkpoints, RunWrites& pending) {
  LaunchOutcome outcome;
  const int world = resolved.world_size;
  std::optional<EmulatedNetwork> network;
  const std::optional<ResolvedIslands> islands =
      resolved.islands && resolved.islands->emulated ? resolved.islands : std::nullopt;
  // The link every rank has: the emulated link, or the one inside an island.
  const std::optional<LinkSpec> link =
      resolved.link_emulated ? resolved.link : (islands ? std::optional<LinkSpec>(islands->inside) : std::nullopt);
  if (link) {
    try {
      network.emplace(run.id, world, link->bits_per_second, link->latency_seconds, link->trace,
                      emulated_islands(islands, world));
      writes_.fact(run.id, "network_emulation", network->description());
    } catch (const std::exception& e) {
      outcome.error = e.what();
      return outcome;
    }
  }
  LaunchSpec spec;
  spec.executable = args_.executable;
  spec.worker = worker_args(run, config, resolved, checkpoints);
  spec.timeout = config.timeout;
  spec.elastic_relaunches = config.elastic ? kElasticRelaunches : 0;
  spec.interrupted = args_.stop_reason;
  if (sweep_) spec.remote = &sweep_->remote();
  if (network)
    spec.place = [&](WorkerArgs& worker) {
      worker.netns = network->rank(worker.rank).netns;
      worker.hostname = network->rank(worker.rank).address;
      worker.message_delay = network->latency_by_netem() ? 0.0 : link->latency_seconds;
      if (islands) worker.message_delay_between = islands->between.latency_seconds;
    };
  // A fork holds the plan and the file's functions already: it trains the run as planned.
  spec.in_fork = [&](const WorkerArgs& worker) {
    return train_rank(worker, catalog_, [&] { return RankRun{&config, callbacks_}; });
  };
  // Worker 0's evaluations also go to the progress display.
  EvaluationTap tap(*pending.stored, resolved.test_metric.key,
                    [&](const MetricRecord& m) { progress_.evaluated(m.epoch, m.key, m.value); });
  progress_.begin(pending.label, config.epochs);
  if (network) network->start_trace();  // its clock starts with the workers'
  try {
    outcome = launch_workers(spec, tap, observe(checkpoints, pending), stop_);
  } catch (const GaveUpOnDatabase&) {
    throw;
  } catch (const Error& e) {
    outcome.error = e.what();
  }
  progress_.end();
  if (network && !link->trace.empty()) writes_.fact(run.id, "network_trace", network->trace_log());
  return outcome;
}

// What the controller does while the run's workers train: progress, facts, commits and
// heartbeats, checkpoints, and when the database has taken no writes for too long, a stop.
LaunchObserver SweepExecutor::observe(const Checkpoints& checkpoints, RunWrites& pending) {
  LaunchObserver observer;
  const std::int64_t id = pending.run_id;
  storage::SqliteSink& stored = *pending.stored;
  observer.on_progress = [this](const ProgressMessage& p) { progress_.update(p); };
  observer.on_wait = [this](const std::string& waiting_on) { progress_.waiting(waiting_on); };
  observer.on_fact = [this, id](const std::string& key, const std::string& value) { writes_.fact(id, key, value); };
  // Every few seconds: commit what arrived (a controller crash then loses at most that much)
  // and show readers that the run and its workers are alive. A database that cannot take
  // writes keeps the rows in the sink; the heartbeat is only a sign of life, and waits.
  observer.on_tick = [this, id, &pending](double workers_silent) {
    write_now(pending);
    if (pending.claim || pending.lost) return;  // not RUNNING in the database (yet)
    try {
      recorder_.heartbeat(id, workers_silent);
    } catch (const StorageError& e) {
      if (!storage::is_transient(e)) throw;
    }
  };
  observer.stop_reason = [this, &pending] { return stop_reason(pending); };
  observer.hold_input = [this, &stored] { return stored.pending() + pending_writes_.rows_kept() > kMaxPendingRows; };
  if (args_.drop_check) observer.drop_reason = [this, id] { return args_.drop_check(id); };
  // Commit every step before the checkpoint, then say it may be resumed from. While the
  // database lags, the checkpoint is kept but not declared: an older one stays the newest.
  observer.on_checkpoint = [this, id, dir = checkpoints.dir, &pending](std::int64_t step) {
    if (pending.claim || pending.lost) return;
    pending.stored->flush();
    if (pending.stored->pending() > 0) return;
    try {
      recorder_.record_checkpoint(id, step);
      remove_older_checkpoints(dir, step);
    } catch (const StorageError& e) {
      if (!storage::is_transient(e)) throw;
    }
  };
  return observer;
}

// Records how the run ended: its last facts, then (in order, once the database takes them) its
// rows and its status. A database that cannot take them now keeps them for later and the sweep
// goes on.
void SweepExecutor::conclude(const LaunchOutcome& outcome, RunWrites& pending) {
  const std::int64_t id = pending.run_id;
  if (pending.lost) return report_lost(pending);  // nothing of it is written: another controller's run
  const storage::RunStatus status = status_of(outcome.ending);
  const bool result = outcome.ok() || outcome.ending == LaunchEnding::Dropped;
  pending.ending = storage::Journal::Status{id, storage::to_string(status), storage::unix_now(),
                                            result ? std::string() : outcome.error};
  if (outcome.ending == LaunchEnding::Dropped) writes_.fact(id, storage::fact::kDropped, outcome.dropped);
  // The run's last facts, kept (for the journal) if the database cannot take them: before the
  // rows are drained, which is where a database that stays full gives up.
  writes_.fact(id, "load_end", load_average_text());
  record_host_load(id, pending.label);
  if (outcome.total_seconds > 0) {
    writes_.fact(id, "seconds_process_start", str_cat(outcome.start_seconds));
    writes_.fact(id, "seconds_teardown", str_cat(outcome.teardown_seconds));
    writes_.fact(id, "seconds_launch", str_cat(outcome.total_seconds));
  }
  if (!outcome.stopped.empty()) throw GaveUpOnDatabase(outcome.stopped);
  pending.concluded = true;
  if (status == storage::RunStatus::Killed) interrupted_ = true;  // the sweep stops at once
  write_now(pending);
  if (pending.lost) {
    report_lost(pending);
  } else if (!pending.ending) {  // written
    count(status);
    std::cout << pending.label << ": " << result_line(id) << std::endl;
  } else {
    std::cout << pending.label << ": " << storage::to_string(status) << "; kept until database " << args_.db
              << " takes writes (" << pending.stored->pending() << " metric rows), the sweep goes on" << std::endl;
    pending_writes_.defer(std::move(pending));
  }
}

}  // namespace laconic::controller
