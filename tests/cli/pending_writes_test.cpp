// A run trained while another process holds the database's lock (controller/pending_writes.hpp): its
// claim, rows and facts wait, land in order when the lock ends, and a claim another controller
// wrote first discards them.
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "../storage/storage_test_support.hpp"
#include "cli_harness.hpp"
#include "controller/durable_writes.hpp"
#include "controller/pending_writes.hpp"
#include "storage/claim_locks.hpp"
#include "storage/queries.hpp"

using namespace laconic;
using laconic::storage::testing::count_rows;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

namespace {

struct PendingFixture {
  TempDir dir;
  std::string path = dir.file("p.db");
  std::unique_ptr<storage::Database> db = storage::Database::open(path);
  storage::Recorder recorder{*db};
  std::int64_t id = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
  controller::DurableWrites writes{recorder, path, 60};
  controller::PendingWrites pending{*db, recorder, writes, path};

  PendingFixture() { db->set_busy_timeout(50); }

  void record_rows(controller::RunWrites& run, int rows) {
    for (int i = 0; i < rows; ++i) run.stored->record({"train_loss", i, 0, 0, 0.1 * i, 1.0 / (i + 1)});
    run.stored->flush();
  }
};

// Claims run `id` while a foreign lock is held, as the controller does when start_run is refused.
controller::RunWrites claimed_under_lock(PendingFixture& f) {
  laconic::testing::WriteLock lock(f.path);
  controller::RunWrites run;
  run.run_id = f.id;
  run.label = "[1/1] e";
  try {
    f.recorder.start_run(f.id, 0);
    FAIL("start_run wrote through another process's lock");
  } catch (const StorageError& e) {
    CHECK(storage::is_lock(e));
  }
  REQUIRE(f.pending.claim_later(run, 0));
  run.stored = f.recorder.retrying_sink(f.id);
  run.stored->hold(true);
  f.writes.fact(f.id, "cores", "2");
  return run;
}

}  // namespace

TEST_CASE("a run trained during a lock is claimed when the lock ends, with its own start, then its rows and end",
          "[cli][pending][lock]") {
  PendingFixture f;
  controller::RunWrites run = claimed_under_lock(f);
  const double started = run.claim->started;
  // Another controller on this host sees the claim and keeps off the run.
  storage::ClaimLocks other(f.path);
  CHECK(other.held_elsewhere(f.id));
  CHECK_FALSE(other.hold(f.id));

  // Past a batch, with the database free again: nothing lands before the claim.
  f.record_rows(run, 20000);
  CHECK(count_rows(*f.db, "metric_values") == 0);
  CHECK(count_rows(*f.db, "run_facts") == 0);
  CHECK(storage::find_run(*f.db, f.id)->status == storage::RunStatus::Queued);

  {
    laconic::testing::WriteLock again(f.path);
    CHECK_THROWS_AS(f.pending.write(run), StorageError);
  }
  run.concluded = true;
  run.ending = storage::Journal::Status{f.id, "FINISHED", started + 5, ""};
  REQUIRE(f.pending.write(run));
  const auto row = storage::find_run(*f.db, f.id);
  CHECK(row->status == storage::RunStatus::Finished);
  CHECK(row->attempts == 1);
  CHECK(row->started == Approx(started));  // when it began training, not when the lock ended
  CHECK(row->ended == Approx(started + 5));
  CHECK(count_rows(*f.db, "metric_values") == 20000);
  CHECK(storage::facts_of(*f.db, f.id).at("cores") == "2");
  // The claim file goes once nobody holds a claim in it.
  CHECK_FALSE(other.held_elsewhere(f.id));
  CHECK_FALSE(std::filesystem::exists(f.path + ".claims"));
}

TEST_CASE("a claim another controller wrote first discards what was trained unclaimed", "[cli][pending][lock]") {
  PendingFixture f;
  controller::RunWrites run = claimed_under_lock(f);
  // A controller that did not see the claim file (another host) claims it in the database.
  {
    auto elsewhere = storage::Database::open(f.path);
    storage::Recorder other(*elsewhere);
    REQUIRE(other.start_run(f.id, 0));
  }
  f.record_rows(run, 100);
  CHECK_FALSE(f.pending.write(run));
  CHECK(run.lost);
  CHECK(run.stored->pending() == 0);
  CHECK(count_rows(*f.db, "metric_values") == 0);
  CHECK(count_rows(*f.db, "run_facts") == 0);
  CHECK(storage::find_run(*f.db, f.id)->attempts == 1);  // the other controller's claim only
  CHECK_FALSE(std::filesystem::exists(f.path + ".claims"));
}

TEST_CASE("a run the database shows taken since it was planned is not claimed for later", "[cli][pending][lock]") {
  PendingFixture f;
  REQUIRE(f.recorder.start_run(f.id, 0));  // started once since the plan saw attempts 0
  laconic::testing::WriteLock lock(f.path);
  controller::RunWrites run;
  run.run_id = f.id;
  CHECK_FALSE(f.pending.claim_later(run, 0));
  CHECK_FALSE(run.claim);
  CHECK_FALSE(std::filesystem::exists(f.path + ".claims"));
}

TEST_CASE("claims still held when their holder goes leave no claim file behind, unless another holds one",
          "[cli][pending][lock]") {
  TempDir dir;
  const std::string db = dir.file("c.db");
  {
    storage::ClaimLocks mine(db);
    REQUIRE(mine.hold(3));
    REQUIRE(std::filesystem::exists(db + ".claims"));
  }  // a controller stopped with run 3 still claimed
  CHECK_FALSE(std::filesystem::exists(db + ".claims"));
  storage::ClaimLocks other(db);
  REQUIRE(other.hold(4));
  {
    storage::ClaimLocks mine(db);
    REQUIRE(mine.hold(3));
  }
  CHECK(std::filesystem::exists(db + ".claims"));  // the other's claim on run 4 stands
  CHECK_FALSE(storage::ClaimLocks(db).held_elsewhere(3));
  CHECK(storage::ClaimLocks(db).held_elsewhere(4));
}
