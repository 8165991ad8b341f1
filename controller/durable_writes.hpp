#pragma once
// The controller's writes to the database, made so that a database that cannot take writes for
// a while (locked by another process, a full disk, a file turned read-only) loses nothing: a
// transient failure is retried with back-off, rows and facts are kept meanwhile, and when the
// retry budget (--db-retry) is spent, what is still pending goes to a recovery journal
// (storage/journal.hpp) that `laconic recover` or `laconic run --resume` replays.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "storage/journal.hpp"
#include "storage/recorder.hpp"

namespace laconic::controller {

/// The database could not take writes for the whole retry budget; the message says what was
/// being written and SQLite's last error.
class GaveUpOnDatabase : public Error {
 public:
  using Error::Error;
};

class DurableWrites {
 public:
  /// `budget_seconds`: how long one outage may last before GaveUpOnDatabase. `stop`, when
  /// given: the controller's stop flag (Ctrl-C, SIGTERM), which ends an outage's wait at once.
  DurableWrites(storage::Recorder& recorder, std::string database, double budget_seconds,
                const std::atomic<bool>* stop = nullptr);

  /// Runs `write` until it succeeds. A transient StorageError (storage::is_transient) is
  /// retried after 0.1 s, doubling to 5 s, with one line on stderr when the outage starts and
  /// one when it ends; other errors are thrown at once; after the budget, or within 0.1 s of a
  /// stop during an outage (a batch scheduler's SIGKILL would follow), GaveUpOnDatabase.
  /// `writes`: false for what only reads, whose success does not end an outage.
  void retry(const std::string& what, const std::function<void()>& write, bool writes = true);

  /// Sets a fact now, or keeps it for flush_facts() if the database cannot take it now (or
  /// its run's facts are held).
  void fact(std::int64_t run_id, const std::string& key, const std::string& value);
  /// One attempt at the kept facts (in the order given, those of held runs kept); true when
  /// none is left but held ones.
  bool flush_facts();
  /// Whether facts wait that flush_facts() would try (not held ones).
  bool facts_waiting() const;
  /// Keeps run `run_id`'s facts until release_facts(): its claim is not written yet.
  void hold_facts(std::int64_t run_id);
  void release_facts(std::int64_t run_id);
  /// Forgets run `run_id`'s kept facts and ignores those that come later: its claim went to
  /// another controller, whose run it is.
  void drop_facts(std::int64_t run_id);
  /// One attempt at the kept facts; throws the StorageError that keeps some (not held) pending.
  void flush_facts_or_throw();
  /// The kept facts, retried until written (GaveUpOnDatabase after the budget).
  void write_facts();

  /// Writes the rows `sink` holds until none is left, retrying; GaveUpOnDatabase after the
  /// budget (the rows stay in the sink, for the journal).
  void drain(storage::SqliteSink& sink);

  /// Writes a recovery journal of what is pending: the rows of `sinks` (null ones passed by),
  /// the kept facts but held ones and the final statuses in `statuses`; returns its path (""
  /// when nothing was pending).
  std::string write_journal(const std::vector<storage::SqliteSink*>& sinks,
                            const std::vector<storage::Journal::Status>& statuses);

  double budget_seconds() const { return budget_; }
  /// Seconds since the current outage started (outage_started()); 0 when there is none.
  double outage_seconds() const;

  /// Says once on stderr that the database cannot take writes (what failed and SQLite's words).
  void outage_started(const std::string& what, const std::string& error);
  /// Says once that it takes writes again, after outage_started().
  void outage_over();

 private:
  storage::Recorder& recorder_;
  std::string database_;
  double budget_;
  const std::atomic<bool>* stop_;
  bool in_outage_ = false;
  std::chrono::steady_clock::time_point outage_since_{};
  std::vector<storage::Journal::Fact> facts_;
  std::set<std::int64_t> held_;     // runs whose facts wait for their claim
  std::set<std::int64_t> dropped_;  // runs another controller claimed first
  std::string fact_error_;   // why the pending facts were refused last
  int fact_error_code_ = 0;  // and SQLite's code for it
};

}  // namespace laconic::controller
