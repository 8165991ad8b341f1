#pragma once
// The controller's writes to the database, made so that a database that cannot take writes for
// a while (locked by another process, a full disk, a file turned read-only) loses nothing: a
// transient failure is retried with back-off, rows and facts are kept meanwhile, and when the
// retry budget (--db-retry) is spent, what is still pending goes to a recovery journal
// (storage/journal.hpp) that `laconic recover` or `laconic run --resume` replays.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "storage/journal.hpp"
#include "storage/recorder.hpp"

namespace laconic::cli {

/// The database could not take writes for the whole retry budget; the message says what was
/// being written and SQLite's last error.
class GaveUpOnDatabase : public Error {
 public:
  using Error::Error;
};

class DurableWrites {
 public:
  /// `budget_seconds`: how long one outage may last before GaveUpOnDatabase.
  DurableWrites(storage::Recorder& recorder, std::string database, double budget_seconds);

  /// Runs `write` until it succeeds. A transient StorageError (storage::is_transient) is
  /// retried after 0.1 s, doubling to 5 s, with one line on stderr when the outage starts and
  /// one when it ends; other errors are thrown at once; after the budget, GaveUpOnDatabase.
  void retry(const std::string& what, const std::function<void()>& write);

  /// Sets a fact now, or keeps it for flush_facts() if the database cannot take it now.
  void fact(std::int64_t run_id, const std::string& key, const std::string& value);
  /// One attempt at the kept facts; true when none is left.
  bool flush_facts();
  /// The kept facts, retried until written (GaveUpOnDatabase after the budget).
  void write_facts();

  /// Writes the rows `sink` holds until none is left, retrying; GaveUpOnDatabase after the
  /// budget (the rows stay in the sink, for the journal).
  void drain(storage::SqliteSink& sink);

  /// Writes a recovery journal of what is pending: the rows of `sink` (may be null), the kept
  /// facts and the final statuses in `statuses`; returns its path ("" when nothing was pending).
  std::string write_journal(storage::SqliteSink* sink, const std::vector<storage::Journal::Status>& statuses);

  double budget_seconds() const { return budget_; }

  /// Says once on stderr that the database cannot take writes (what failed and SQLite's words).
  void outage_started(const std::string& what, const std::string& error);
  /// Says once that it takes writes again, after outage_started().
  void outage_over();

 private:
  storage::Recorder& recorder_;
  std::string database_;
  double budget_;
  bool in_outage_ = false;
  std::vector<storage::Journal::Fact> facts_;
  std::string fact_error_;   // why the pending facts were refused last
  int fact_error_code_ = 0;  // and SQLite's code for it
};

}  // namespace laconic::cli
