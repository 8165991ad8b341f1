#include "controller/launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "controller/rank_relay.hpp"
#include "controller/supervised_worker.hpp"
#include "controller/worker_processes.hpp"
#include "engine/comm/elastic.hpp"
#include "engine/comm/store.hpp"
#include "engine/core/error.hpp"
#include "engine/core/liveness.hpp"
#include "engine/rendezvous_store.hpp"
#include "storage/run_facts.hpp"

namespace laconic::controller {
namespace {

using Clock = SteadyClock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Kills and reaps the workers still running when launch_workers is left by an exception (a
// failed write of the sink or of an observer, a failed fork): no worker outlives its run's
// launch, and the next run of a sweep never starts beside the last one's leftovers.
class ReapOnError {
 public:
  explicit ReapOnError(std::vector<SupervisedWorker>& workers) : workers_(workers) {}
  ~ReapOnError() {
    if (done_) return;
    // pid -1 is a worker not yet forked: kill(-1, ...) would signal every process there is.
    for (auto& w : workers_)
      if ((w.pid > 0 || w.remote) && !w.exited) w.signal(SIGKILL);
    for (auto& w : workers_) {
      if (w.pid > 0 && !w.exited) ::waitpid(w.pid, &w.status, 0);  // SIGKILL cannot be ignored
      w.exited = true;
      if (w.fd >= 0 && !w.remote) ::close(w.fd);
    }
  }
  ReapOnError(const ReapOnError&) = delete;
  ReapOnError& operator=(const ReapOnError&) = delete;
  void done() { done_ = true; }

 private:
  std::vector<SupervisedWorker>& workers_;
  bool done_ = false;
};

// When the run must end: the first failure (a worker that failed or hung), after which the
// others get kFailureGraceSeconds before they are killed; a stop (the user's, or the
// observer's), after which they get 5 s to answer SIGTERM before SIGKILL.
struct Escalation {
  std::optional<Clock::time_point> first_failure;
  std::string first_failed;  ///< "worker 1 failed first", "worker 0 hung": what the others were stopped for
  std::optional<Clock::time_point> stop_time;
  std::string stopped;  ///< the observer's reason ("" when it gave none)
  std::string dropped;  ///< the observer's reason to end it early ("" when it gave none)

  void failed(Clock::time_point now, std::string why) {
    if (first_failure) return;
    first_failure = now;
    first_failed = std::move(why);
  }
};

// Watches one run's workers until every one has exited: reads what they report, tells hung and
// lost ones, stops the rest after a failure or on request, and says how the run ended.
class Supervisor {
 public:
  Supervisor(const LaunchSpec& spec, MetricsSink& sink, const LaunchObserver& observer, const std::atomic<bool>& stop)
      : spec_(spec),
        sink_(sink),
        observer_(observer),
        stop_(stop),
        workers_(static_cast<std::size_t>(spec.worker.order.processes())),
        reap_(workers_) {}

  LaunchOutcome run() {
    start_all();
    while (!all_done()) {
      read_or_wait();
      now_ = Clock::now();
      ping_remote_ranks();
      check_exits();
      check_hung();
      stop_the_rest_after_grace();
      check_stop();
      if (observer_.on_wait) observer_.on_wait(waiting_on());
      tick();
      check_drop();
    }
    const auto reaped = Clock::now();
    if (!relaunches_.empty() && observer_.on_fact) observer_.on_fact(storage::fact::kElasticRelaunches, relaunches_);
    sink_.flush();
    reap_.done();  // every worker has exited and been reaped
    return outcome(reaped);
  }

 private:
  void start_all() {
    if (!spec_.remote) store_dir_.emplace();
    launched_ = Clock::now();
    for (std::size_t p = 0; p < workers_.size(); ++p) {
      auto& w = workers_[p];
      w.rank = static_cast<int>(p) * spec_.worker.order.ranks_per_process();
      w.ranks = spec_.worker.order.ranks_per_process();
      w.last_heard = Clock::now();
      if (spec_.remote && w.rank > 0)
        start_remote(w);
      else
        start_here(w);
    }
  }

  // Tells rank r's laconic process to start its worker for this run.
  void start_remote(SupervisedWorker& w) {
    w.remote = spec_.remote->connections.at(static_cast<std::size_t>(w.rank - 1)).get();
    w.fd = w.remote->fd();
    if (!w.remote->send_line(encode(RankOrder{spec_.worker.order})))
      lost(w, "its connection to rank 0 is closed: its process or its host went away");
  }

  void start_here(SupervisedWorker& w) {
    WorkerArgs args = spec_.worker;
    args.rank = w.rank;
    args.incarnation = w.incarnation;
    if (store_dir_) args.store = store_dir_->path();
    if (spec_.place) spec_.place(args);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(str_cat("pipe failed: ", std::strerror(errno)));
    // dup2 in the child clears O_CLOEXEC on the copy, so only fd 3 survives the exec.
    w.pid = start_worker(spec_, args, fds[1]);
    ::close(fds[1]);
    w.fd = fds[0];
  }

  void lost(SupervisedWorker& w, const std::string& why) {
    const std::string sentence = w.mark_lost(why);
    if (spec_.remote && spec_.remote->lost.empty()) spec_.remote->lost = sentence;
  }

  bool all_done() const {
    return std::all_of(workers_.begin(), workers_.end(), [](const auto& w) { return w.exited && w.fd < 0; });
  }

  // Reads whatever the workers sent, waiting up to 200 ms; while the observer holds the input,
  // reads nothing (the workers block once their pipes are full).
  void read_or_wait() {
    if (observer_.hold_input && observer_.hold_input()) {
      ::usleep(200'000);
      input_resumed_ = Clock::now();  // silence while not read is the controller's, not theirs
      return;
    }
    std::vector<pollfd> polls;
    std::vector<SupervisedWorker*> owners;
    for (auto& w : workers_)
      if (w.fd >= 0) {
        polls.push_back({w.fd, POLLIN, 0});
        owners.push_back(&w);
      }
    if (polls.empty()) {
      ::usleep(50'000);
      return;
    }
    if (::poll(polls.data(), polls.size(), 200) <= 0) return;
    for (std::size_t i = 0; i < polls.size(); ++i)
      if (polls[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        const std::string gone = owners[i]->drain(sink_, observer_, checkpoints_, spec_.worker.order.world());
        if (!gone.empty() && spec_.remote->lost.empty()) spec_.remote->lost = gone;
      }
  }

  // One clock for every message about a silent worker: since it was last heard, while its pipe
  // or connection was read.
  double silent_for(const SupervisedWorker& w) const {
    return seconds_between(std::max(w.last_heard, input_resumed_), now_);
  }

  // A sign of life to the other ranks' laconic processes, which give up on a rank 0 they no
  // longer hear (a link down keeps a TCP connection open for many minutes).
  void ping_remote_ranks() {
    if (!spec_.remote || seconds_between(last_ping_, now_) <= kRankZeroPingSeconds) return;
    last_ping_ = now_;
    for (auto& w : workers_)
      if (w.remote && !w.exited) w.remote->send_line(encode(RankOrder{StillAlive{}}));
  }

  void check_exits() {
    for (auto& w : workers_) {
      w.poll_exit();
      // A remote rank told to die that does not answer is unreachable: lost, on the clock of its
      // silence, which the message counts as the hung one did.
      if (!w.exited && w.remote && w.killed_at && seconds_between(*w.killed_at, now_) > kFailureGraceSeconds) {
        w.hung.clear();
        lost(w, str_cat("no sign of life for ", static_cast<long>(silent_for(w)), " s (last heard during ", w.phase,
                        ") and no answer to rank 0's kill: its process, its host or the link to it is gone"));
      }
      if (w.exited && !w.succeeded() && !w.left && !relaunched(w) && !went_on_without(w))
        escalation_.failed(now_, w.label() + " failed first");
    }
  }

  // Whether an elastic run goes on without worker `w` (not 0) that ended: the run still going.
  bool elastic_goes_on(const SupervisedWorker& w) const {
    return spec_.elastic_relaunches > 0 && w.rank > 0 && !stop_ && !escalation_.first_failure &&
           !escalation_.stop_time && !workers_.front().exited;
  }

  // Posts in the run's store that `w`'s current incarnation is gone, for worker 0's quorum.
  void post_gone(const SupervisedWorker& w) {
    if (!run_store_)
      run_store_ = comm::prefixed(
          store_dir_ ? comm::open_file_store(store_dir_->path())
                     : engine::open_store(comm::StoreAddress::parse(spec_.worker.store), engine::StoreRole::Client,
                                          std::chrono::milliseconds(static_cast<std::int64_t>(spec_.timeout * 1000))),
          spec_.worker.order.store_prefix);
    run_store_->set(comm::elastic_gone_key(w.rank, w.incarnation), {});
  }

  // An elastic run's worker (not 0) that died on its own, once its pipe is read to the end: posted
  // gone, and started again to rejoin, here or by its rank's laconic process on its host. True
  // when it was (or will be, its pipe still open) relaunched.
  bool relaunched(SupervisedWorker& w) {
    const bool may = elastic_goes_on(w) && !w.lost && w.hung.empty() && w.stopped.empty() && !w.diverged() &&
                     w.incarnation < spec_.elastic_relaunches;
    if (!may) return false;
    if (w.fd >= 0) return true;  // its last words first
    relaunches_ += str_cat(relaunches_.empty() ? "" : "; ", w.describe_exit(), " (relaunched)");
    post_gone(w);
    w.incarnation += 1;
    w.exited = false;
    w.status = 0;
    w.failure.clear();
    w.partial_line.clear();
    w.phase = "starting";
    w.quiet = 0;
    w.last_heard = now_;
    if (!w.remote) {
      start_here(w);
    } else {
      w.fd = w.remote->fd();
      if (!w.remote->send_line(encode(RankOrder{RelaunchOrder{w.incarnation}})))
        lost(w, "its connection to rank 0 is closed: its process or its host went away");
    }
    return true;
  }

  // An elastic run's rank lost with its host (its connection closed, or no answer to a kill after
  // it fell silent): posted gone, and the run goes on without it; nothing there relaunches it.
  bool went_on_without(SupervisedWorker& w) {
    if (!w.lost || !elastic_goes_on(w)) return false;
    relaunches_ += str_cat(relaunches_.empty() ? "" : "; ", w.describe_exit(), " (left the run)");
    post_gone(w);
    w.left = true;
    return true;
  }

  // A worker silent for `timeout` seconds (a stopped or frozen process), or whose main thread
  // made no progress for longer than a collective may wait, is hung: killed, and named.
  void check_hung() {
    for (auto& w : workers_) {
      if (w.exited || !w.hung.empty()) continue;
      const double silent = silent_for(w);
      const double stalled = w.quiet + silent;
      const double longest_wait = (w.phase == kRegroupingPhase ? 2 : 1) * spec_.timeout;
      if (silent <= spec_.timeout && stalled <= longest_wait + kFailureGraceSeconds) continue;
      w.hung = silent > spec_.timeout
                   ? str_cat(w.label(), " hung: no sign of life for ", static_cast<long>(silent),
                             " s (last heard during ", w.phase, ")")
                   : str_cat(w.label(), " hung: no progress for ", static_cast<long>(stalled), " s during ", w.phase);
      w.signal(SIGKILL);
      // An elastic run's remote rank may be cut off (its heartbeats do not arrive): lost if it does
      // not answer the kill (went_on_without), a failure if it does (it was hung).
      if (!(w.remote && elastic_goes_on(w))) escalation_.failed(now_, w.label() + " hung");
    }
  }

  // Once one worker failed, the others get a few seconds to report what they saw, then go: a
  // run whose worker died ends within seconds, before or after the rendezvous.
  void stop_the_rest_after_grace() {
    const auto& first = escalation_.first_failure;
    if (!first || seconds_between(*first, now_) <= kFailureGraceSeconds) return;
    for (auto& w : workers_) {
      if (w.exited || !w.hung.empty()) continue;
      // One that has been silent for a while was frozen, not merely waiting on the failed one.
      const double silent = silent_for(w);
      if (silent > kSilentAfterSeconds)
        w.hung = str_cat(w.label(), " hung: no sign of life for ", static_cast<long>(silent), " s (last heard during ",
                         w.phase, ")");
      else if (w.stopped.empty())
        w.stopped = escalation_.first_failed;
      if (!w.killed_at) w.signal(SIGKILL);
    }
  }

  void check_stop() {
    if (escalation_.stopped.empty() && observer_.stop_reason) escalation_.stopped = observer_.stop_reason();
    if ((stop_ || !escalation_.stopped.empty() || !escalation_.dropped.empty()) && !escalation_.stop_time) {
      escalation_.stop_time = now_;
      for (auto& w : workers_) w.signal(SIGTERM);
    }
    if (escalation_.stop_time && seconds_between(*escalation_.stop_time, now_) > 5)
      for (auto& w : workers_) w.signal(SIGKILL);
  }

  // What the run waits on (LaunchObserver::on_wait): the running worker silent longest, once past
  // kSilentAfterSeconds; else the one whose main thread made no progress longest, past
  // kStalledAfterSeconds; else "".
  std::string waiting_on() const {
    const SupervisedWorker* silent = nullptr;
    const SupervisedWorker* stalled = nullptr;
    for (const auto& w : workers_) {
      if (w.exited || !w.first_heard) continue;
      if (!silent || silent_for(w) > silent_for(*silent)) silent = &w;
      if (!stalled || w.quiet + silent_for(w) > stalled->quiet + silent_for(*stalled)) stalled = &w;
    }
    if (silent && silent_for(*silent) > kSilentAfterSeconds)
      return str_cat("no word from ", silent->label(), " for ", static_cast<long>(silent_for(*silent)),
                     " s (last heard during ", silent->phase, ")");
    if (stalled && stalled->quiet + silent_for(*stalled) > kStalledAfterSeconds)
      return str_cat(stalled->label(), " has made no progress for ",
                     static_cast<long>(stalled->quiet + silent_for(*stalled)), " s (", stalled->phase, ")");
    return "";
  }

  void tick() {
    if (!observer_.on_tick || seconds_between(last_tick_, now_) <= 5) return;
    last_tick_ = now_;
    double silent = 0;
    for (const auto& w : workers_)
      if (!w.exited) silent = std::max(silent, seconds_between(w.last_heard, now_));
    observer_.on_tick(silent);
  }

  // Every second: whether the observer ends the run early (laconic advise's probes).
  void check_drop() {
    if (!observer_.drop_reason || !escalation_.dropped.empty() || seconds_between(last_drop_check_, now_) < 1) return;
    last_drop_check_ = now_;
    escalation_.dropped = observer_.drop_reason();
  }

  LaunchOutcome outcome(Clock::time_point reaped) const {
    LaunchOutcome outcome;
    const SupervisedWorker& first = workers_.front();
    if (first.first_heard) {
      outcome.start_seconds = seconds_between(launched_, *first.first_heard);
      outcome.teardown_seconds = seconds_between(first.last_heard, reaped);
    }
    outcome.total_seconds = seconds_between(launched_, reaped);
    outcome.stopped = escalation_.stopped;
    outcome.dropped = escalation_.dropped;
    outcome.error = causes();
    outcome.ending = ending();
    // Stopped by the user: the workers' signals (the terminal's SIGINT, the controller's SIGTERM)
    // are the stop itself, not a cause to look for.
    if (outcome.ending == LaunchEnding::Interrupted) outcome.error = spec_.interrupted;
    if (outcome.ending == LaunchEnding::Stopped) outcome.error = "stopped: " + outcome.stopped;
    // A diverged worker's reason is the run's; its peers only lost their connection to it.
    if (outcome.ending == LaunchEnding::Diverged) {
      const SupervisedWorker& w = *std::find_if(workers_.begin(), workers_.end(), [](auto& w) { return w.diverged(); });
      outcome.error = w.failure.empty() ? w.describe_exit() : w.failure;
    }
    return outcome;
  }

  LaunchEnding ending() const {
    if (stop_) return LaunchEnding::Interrupted;
    if (!escalation_.stopped.empty()) return LaunchEnding::Stopped;
    if (!escalation_.dropped.empty()) return LaunchEnding::Dropped;
    if (std::any_of(workers_.begin(), workers_.end(), [](const auto& w) { return w.diverged(); }))
      return LaunchEnding::Diverged;
    const bool all_ok =
        std::all_of(workers_.begin(), workers_.end(), [](const auto& w) { return w.succeeded() || w.left; });
    return all_ok ? LaunchEnding::Finished : LaunchEnding::Failed;
  }

  // Every worker that did not succeed, causes first: a lost rank, then one killed by a signal
  // (kill -9, the OOM killer) or hung, whose peers' failures ("Connection reset by peer") only
  // follow from it; those peers last.
  std::string causes() const {
    const auto rank_of_cause = [](const SupervisedWorker& w) { return w.lost ? 0 : w.killed() ? 1 : 2; };
    std::string error;
    for (int cause = 0; cause <= 2; ++cause)
      for (const auto& w : workers_)
        if (!w.succeeded() && !w.left && rank_of_cause(w) == cause)
          error += (error.empty() ? "" : "; ") + w.describe_exit();
    return error;
  }

  const LaunchSpec& spec_;
  MetricsSink& sink_;
  const LaunchObserver& observer_;
  const std::atomic<bool>& stop_;
  std::vector<SupervisedWorker> workers_;
  ReapOnError reap_;
  std::optional<StoreDir> store_dir_;
  std::shared_ptr<comm::KeyValueStore> run_store_;  // an elastic run's, opened at its first loss
  CheckpointCounts checkpoints_;
  Escalation escalation_;
  std::string relaunches_;  // an elastic run's lost workers, in the words of their exits
  Clock::time_point launched_{}, now_ = Clock::now(), last_tick_ = Clock::now(), last_drop_check_ = Clock::now(),
                    last_ping_ = Clock::now(),
                                 input_resumed_ = Clock::now();
};

}  // namespace

LaunchOutcome launch_workers(const LaunchSpec& spec, MetricsSink& sink, const LaunchObserver& observer,
                             const std::atomic<bool>& stop) {
  return Supervisor(spec, sink, observer, stop).run();
}

}  // namespace laconic::controller
