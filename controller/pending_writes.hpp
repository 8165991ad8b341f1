#pragma once
// What a run still has to write, and the runs that ended while the database could not take
// writes. So that a lock held by another process stalls neither a run nor the sweep: a run that
// ends during the lock keeps its rows, facts and ending here while the next run starts, and a
// run whose claim cannot be written trains meanwhile, its claim (with the start it really had)
// written first when the lock ends, then its rows. Everything is written in order, run by run,
// each run's claim before its rows and its rows before its ending (docs/cli.md, "Faults").
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/durable_writes.hpp"
#include "storage/claim_locks.hpp"
#include "storage/database.hpp"
#include "storage/journal.hpp"
#include "storage/recorder.hpp"
#include "storage/run_status.hpp"
#include "storage/sqlite_sink.hpp"

namespace laconic::controller {

/// One run's writes not yet in the database.
struct RunWrites {
  std::int64_t run_id = -1;
  std::string label;  ///< "[2/4] exp name", for what is printed when they land
  std::unique_ptr<storage::SqliteSink> stored;
  /// Its ending once the run is RUNNING in the database: KILLED by a database that gives out
  /// while it trains, replaced by how it ended when it ends.
  std::optional<storage::Journal::Status> ending;
  /// A claim not yet written: the attempts the plan saw, and when the run started training.
  struct Claim {
    std::int64_t attempts = 0;
    double started = 0;
  };
  std::optional<Claim> claim;
  std::optional<std::int64_t> rewind_to;  ///< rows from this step on are deleted once it is claimed
  bool concluded = false;                 ///< it ended: `ending` is written after its rows
  bool lost = false;                      ///< another controller's claim was written first
};

class PendingWrites {
 public:
  /// `database`: the path of `db`, for the claim file (storage/claim_locks.hpp).
  PendingWrites(storage::Database& db, storage::Recorder& recorder, DurableWrites& writes, const std::string& database);

  /// Whether another controller on this host trains run `run_id` unclaimed.
  bool claimed_elsewhere(std::int64_t run_id) const { return locks_.held_elsewhere(run_id); }
  /// Lets `run` train before its claim is written (the database is locked): takes its claim
  /// lock, checks that the database still holds it as planned (started `attempts` times, not
  /// RUNNING, FINISHED or DIVERGED) and holds its facts and rows until the claim is written.
  /// False, with nothing held, when it is not free.
  bool claim_later(RunWrites& run, std::int64_t attempts);

  /// One attempt at `run`'s writes: its claim, rewind, rows, the kept facts, and its ending
  /// once concluded. True when all are written; false when its claim went to another
  /// controller first (`run.lost`: its rows and facts are dropped). A transient StorageError
  /// (the database cannot take writes yet) is thrown with what was written kept written.
  bool write(RunWrites& run);
  /// Keeps a concluded run whose writes did not all land.
  void defer(RunWrites run) { deferred_.push_back(std::move(run)); }
  /// One attempt at the deferred runs, oldest first; each whose writes land, or whose claim
  /// went to another controller (`lost`), goes to `on_written` and is forgotten. Throws like
  /// write(), at the first that cannot be written.
  void write_deferred(const std::function<void(const RunWrites&)>& on_written);
  bool any_deferred() const { return !deferred_.empty(); }
  /// Rows kept for the deferred runs.
  std::size_t rows_kept() const;
  /// The deferred runs, for a recovery journal.
  std::list<RunWrites>& deferred() { return deferred_; }
  /// Forgets a run whose claim was never written: its rows and facts are dropped, its claim
  /// lock released. Returns the rows dropped.
  std::size_t drop_unclaimed(RunWrites& run);

 private:
  bool write_claim(RunWrites& run);

  storage::Database& db_;
  storage::Recorder& recorder_;
  DurableWrites& writes_;
  std::string database_;
  storage::ClaimLocks locks_;
  std::list<RunWrites> deferred_;
};

}  // namespace laconic::controller
