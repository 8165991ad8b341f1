#include "controller/run_sweep.hpp"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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

#include "controller/durable_writes.hpp"
#include "controller/emulated_network.hpp"
#include "controller/host_load.hpp"
#include "controller/launched_sweep.hpp"
#include "controller/launcher.hpp"
#include "controller/progress.hpp"
#include "controller/run_selection.hpp"
#include "controller/sweep_executor.hpp"
#include "controller/worker_command.hpp"
#include "controller/worker_processes.hpp"
#include "engine/catalog.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/train/runtime.hpp"
#include "lua/experiment.hpp"
#include "reports/format.hpp"
#include "storage/database.hpp"
#include "storage/journal.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/sqlite_sink.hpp"

namespace laconic::controller {
namespace {

// Replays every recovery journal of `database` not yet replayed, printing one line per journal,
// and marks each replayed (what `laconic run --resume` does first).
void replay_journals(storage::Database& db, const std::string& database) {
  for (const auto& path : storage::find_journals(database)) {
    const storage::Journal journal = storage::read_journal(path);
    try {
      const std::size_t rows = storage::replay_journal(db, journal, path);
      std::cout << "laconic: replayed the recovery journal " << path << ": " << rows << " metric rows, "
                << journal.statuses.size() << " run statuses, " << journal.facts.size() << " facts\n";
    } catch (const ConfigError& e) {
      // Replayed before (by `laconic recover`, whose rename failed): nothing left to do.
      if (std::string(e.what()).find("was already replayed") == std::string::npos) throw;
    }
    storage::mark_replayed(path);
  }
}


std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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

/// Milliseconds the controller's connection waits for another process's lock before a write is
/// put off (and retried); short, so the controller keeps reading its workers meanwhile.
constexpr int kControllerBusyTimeoutMs = 50;

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
    if (name == kSeedVariable || listed != keep_only_drop) continue;
    key[name] = value_to_json(value);
  }
  return key.dump();
}

/// Forks `args.jobs` controllers, job i pinned to `ranks` cores of its own from core i x ranks
/// (modulo the host's), each running run_sweep on every jobs-th run; waits for all of them.
int run_jobs(const SweepOptions& args, const std::atomic<bool>& stop, int ranks) {
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
      SweepOptions mine = args;
      mine.job_index = job;
      int status = 1;
      try {
        status = run_sweep(mine, stop);
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

/// Tuning: every trial of every configuration on the first seed, then the best trial of each
/// configuration on every seed (Harris 2020: tune each method on its own).
void run_tuned(const lua::ExperimentPlan& plan, const std::vector<std::size_t>& selected, SweepExecutor& executor) {
  const auto& tune = *plan.tune;
  const std::int64_t tuning_seed = plan.runs.front().seed;
  std::vector<PlannedRun> trials;
  for (std::size_t i : selected)
    if (plan.runs[i].seed == tuning_seed) trials.push_back({i, tuned(plan.runs[i], "trial")});
  std::cout << plan.name << ": tuning " << tune.metric << " (" << goal_name(tune.goal) << ") over " << tune.trials
            << " trials per configuration on seed " << tuning_seed << "\n";
  executor.execute(trials);
  if (executor.interrupted()) return;
  std::map<std::string, std::pair<double, std::string>> best;  // configuration -> metric, trial
  for (const PlannedRun& trial : trials) {
    const double value = executor.final_metric(trial, tune.metric);
    if (std::isnan(value)) continue;
    const std::string config = key_without(plan.runs[trial.index], tune.drawn, false);
    auto it = best.find(config);
    if (it == best.end() || better(tune.goal, value, it->second.first))
      best[config] = {value, key_without(plan.runs[trial.index], tune.drawn, true)};
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
}

/// The runs this controller (or job) trains, in the order it trains them: --only, --shard, its
/// share of --jobs, in train_order; refuses what cannot be split.
std::vector<std::size_t> runs_to_train(const SweepOptions& args, const lua::ExperimentPlan& plan) {
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
  if (args.train_order)
    std::stable_sort(selected.begin(), selected.end(), [&](std::size_t a, std::size_t b) {
      return args.train_order(plan.runs[a]) < args.train_order(plan.runs[b]);
    });
  return selected;
}

/// With --jobs (in the parent): the ranks of the largest run, each job's share of cores;
/// refuses more ranks than cores unless --oversubscribe.
int ranks_per_job(const SweepOptions& args, const lua::ExperimentPlan& plan, const engine::EngineCatalog& catalog,
                  const std::vector<std::size_t>& selected) {
  const int cores = host_cores();
  int job_ranks = 1;
  for (std::size_t i : selected) {
    // Thread ranks fill the cores they are given, however many they are.
    const int world = catalog.world_size(plan.runs[i]);
    job_ranks = std::max(job_ranks, catalog.thread_ranks(plan.runs[i]) ? std::min(world, cores) : world);
  }
  if (args.jobs * job_ranks > cores && !args.oversubscribe)
    throw ConfigError(str_cat("--jobs ", args.jobs, " x ", job_ranks, " ranks per run = ", args.jobs * job_ranks,
                              " ranks on ", cores,
                              " cores: they would take turns and measure each other; lower "
                              "--jobs, or add --oversubscribe"));
  return job_ranks;
}

/// Refuses an emulated link this host cannot build, and removes what dead controllers left.
void prepare_host(const lua::ExperimentPlan& plan, const engine::EngineCatalog& catalog,
                  const std::vector<std::size_t>& selected) {
  for (std::size_t i : selected)
    if (catalog.emulates_network(plan.runs[i]))
      if (const std::string why = why_no_emulation(); !why.empty())
        throw ConfigError(str_cat("run ", i + 1, " (", plan.runs[i].name, "): ", why, "; or set emulate = false"));
  for (const auto& dir : remove_stale_store_dirs())
    std::cout << "laconic: removed " << dir << ", the rendezvous directory of a controller that died\n";
  for (const auto& name : remove_stale_namespaces())
    std::cout << "laconic: removed network namespace " << name << ", of an emulated link whose controller died\n";
}

/// Opens the database the sweep records into: a damaged file is found now, before anything
/// trains into it; with --resume, its journals are replayed and the file is checked unchanged.
std::unique_ptr<storage::Database> open_for_sweep(const SweepOptions& args, const lua::ExperimentPlan& plan) {
  const bool existed = args.db != ":memory:" && std::filesystem::exists(args.db);
  auto db = storage::Database::open(args.db);
  if (existed) db->check_integrity();
  if (args.resume) replay_journals(*db, args.db);
  if (args.resume && !args.force) check_unchanged(*db, plan, args.file);
  return db;
}

}  // namespace

std::string resume_command(const SweepOptions& args) {
  const auto quoted = [](const std::string& word) {
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
      return std::isalnum(c) || std::strchr("_./=,:@+-%", c) != nullptr;
    });
    if (plain) return word;
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  std::string command = "laconic run --resume " + quoted(args.file);
  for (const std::string& set : args.overrides) command += " --set " + quoted(set);
  if (!args.only.empty()) command += " --only " + quoted(args.only);
  if (!args.shard.empty()) command += " --shard " + quoted(args.shard);
  return command + " --db " + quoted(args.db);
}

int run_sweep(const SweepOptions& args, const std::atomic<bool>& stop) {
  // The controller computes nothing itself; pinned, it starts no thread pool its forks (the
  // workers) would inherit broken.
  train::pin_threads(1);
  engine::EngineCatalog catalog;
  (void)stamped_arrivals_requested();  // the workers read it: a bad value is refused here, before any run
  // Load and validate everything before the database is touched: a broken file records nothing.
  lua::LoadOptions load_options;
  load_options.overrides = args.overrides;
  // With the file's functions, which the forked workers call (and never load the file again).
  const auto loaded = lua::load_experiment_with_callbacks(args.file, catalog, load_options);
  const lua::ExperimentPlan& plan = loaded.plan;
  const std::vector<std::size_t> selected = runs_to_train(args, plan);
  const bool forks_jobs = args.jobs > 1 && args.job_index < 0;
  const int job_ranks = forks_jobs ? ranks_per_job(args, plan, catalog, selected) : 1;
  check_runs(catalog, plan, selected);
  std::optional<RankHello> mine;
  if (args.launched) {
    check_launchable(args, *args.launched, plan, catalog, selected);
    mine = own_hello(*args.launched, plan, catalog, selected);
    if (args.launched->rank > 0)
      return follow_rank0(args, *args.launched, plan, loaded.callbacks.get(), catalog, *mine, stop);
  }
  prepare_host(plan, catalog, selected);
  auto db = open_for_sweep(args, plan);
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
  // Until here nothing trains, and a write may wait for another controller's lock (the default
  // busy timeout: a second controller started together on the same file must not fail on the
  // first's transaction). From here every write of the controller is retried (DurableWrites, a
  // KeepAndRetry sink), so it need not wait: waiting, it would stop reading the workers' pipes,
  // and a long lock would stall their training until Gloo's timeout failed the run. Rows wait
  // in memory.
  db->set_busy_timeout(kControllerBusyTimeoutMs);
  SweepExecutor executor(args, stop, plan, loaded.callbacks.get(), catalog, *db, recorder, experiment_id, sweep.get());
  if (plan.tune) {
    run_tuned(plan, selected, executor);
  } else {
    std::vector<PlannedRun> runs;
    for (std::size_t i : selected) runs.push_back({i, plan.runs[i]});
    executor.execute(runs);
  }
  return finish(executor.report());
}

}  // namespace laconic::controller
