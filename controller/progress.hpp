#pragma once
// What `laconic run` says while it trains. On a terminal, one line redrawn in place; in a log
// (stdout not a terminal), a line per evaluation of each run and at least one every
// `log_interval` seconds; nothing with --quiet. Every line ends with an estimate of the time
// left for the run and for the sweep.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/worker_message.hpp"

namespace laconic::controller {

enum class ProgressMode {
  Live,   ///< a terminal: the line is redrawn in place
  Log,    ///< a file or pipe: whole lines, one per evaluation and every log_interval seconds
  Quiet,  ///< nothing
};

/// Live when `out` is a terminal, else Log; Quiet when `quiet`.
ProgressMode progress_mode_for(std::FILE* out, bool quiet);

/// "12s", "3m05s", "1h02m": an estimate's precision.
std::string eta_text(double seconds);

/// Estimates of the time left, from the runs of this sweep already trained and the steps done.
class SweepClock {
 public:
  /// `runs` is how many runs this sweep will train (skipped ones left out).
  explicit SweepClock(std::size_t runs = 0) : runs_(runs) {}
  void add_runs(std::size_t runs) { runs_ += runs; }
  /// A run finished (or failed) after `seconds` of wall time.
  void run_done(double seconds);
  /// Seconds left in the current run: steps left / steps per second. NaN when unknown.
  static double run_left(const ProgressMessage& p, std::int64_t epochs);
  /// Seconds left in the sweep: the current run's time left, plus the runs not yet started at
  /// the mean wall time of the runs done (or, before any is done, the current run's expected
  /// total: `elapsed` + its time left). NaN when unknown.
  double sweep_left(double run_left, double elapsed) const;
  std::size_t runs_done() const { return done_; }

 private:
  std::size_t runs_ = 0;
  std::size_t done_ = 0;
  double done_seconds_ = 0;
};

class Progress {
 public:
  /// Lines go to `out` (stdout in laconic run).
  Progress(ProgressMode mode, std::FILE* out, double log_interval_seconds = 30)
      : mode_(mode), out_(out), log_interval_(log_interval_seconds) {}
  SweepClock& clock() { return clock_; }
  /// A run starts: "[1/2] quickstart compressor=none,seed=1" trains `epochs` epochs.
  void begin(const std::string& label, std::int64_t epochs);
  /// Rank 0's progress: redraws the live line; in a log, prints a line when log_interval has
  /// passed since the last one.
  void update(const ProgressMessage& progress);
  /// What the run waits on (LaunchObserver::on_wait; "" while nothing stalls): in a log, a line
  /// with it every log_interval seconds though no progress arrives; on a terminal, the line
  /// redrawn with it every second.
  void waiting(const std::string& waiting_on);
  /// Worker 0 evaluated: in a log, a line with the metric ("test_accuracy 0.8512").
  void evaluated(std::int64_t epoch, const std::string& key, double value);
  /// The run is over (its result line follows): clears the live line, feeds the sweep clock.
  void end();
  /// Clears the live line so that other output starts clean.
  void clear();

 private:
  std::string line(const std::string& extra) const;
  void write_log_line(const std::string& extra);

  using Clock = std::chrono::steady_clock;
  ProgressMode mode_;
  std::FILE* out_;
  double log_interval_;
  SweepClock clock_;
  std::string label_;
  std::int64_t epochs_ = 0;
  std::optional<ProgressMessage> last_;
  Clock::time_point started_{};
  Clock::time_point last_line_{};
  Clock::time_point last_drawn_{};
  bool drawn_ = false;
};

}  // namespace laconic::controller
