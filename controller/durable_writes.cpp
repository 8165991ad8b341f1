#include "controller/durable_writes.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include <sqlite3.h>

#include "storage/sqlite_sink.hpp"

namespace laconic::controller {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

DurableWrites::DurableWrites(storage::Recorder& recorder, std::string database, double budget_seconds,
                             const std::atomic<bool>* stop)
    : recorder_(recorder), database_(std::move(database)), budget_(budget_seconds), stop_(stop) {}

void DurableWrites::outage_started(const std::string& what, const std::string& raw_error) {
  if (in_outage_) return;
  // SQLite's words only ("database is locked"), not the statement that failed.
  const auto code_at = raw_error.rfind("(SQLite code ");
  const auto words_at = raw_error.rfind(": ", code_at);
  const std::string error = code_at != std::string::npos && words_at != std::string::npos
                                ? raw_error.substr(words_at + 2, code_at - words_at - 3)
                                : raw_error;
  in_outage_ = true;
  outage_since_ = Clock::now();
  std::cerr << "laconic: database " << database_ << " cannot take writes (while trying to " << what << ": " << error
            << "); keeping what arrives and retrying for up to " << budget_ << " s (--db-retry)" << std::endl;
}

void DurableWrites::outage_over() {
  if (!in_outage_) return;
  in_outage_ = false;
  std::cerr << "laconic: database " << database_ << " takes writes again; nothing was lost" << std::endl;
}

void DurableWrites::retry(const std::string& what, const std::function<void()>& write, bool writes) {
  const auto start = Clock::now();
  double backoff = 0.1;
  while (true) {
    try {
      write();
      if (writes) outage_over();
      return;
    } catch (const StorageError& e) {
      if (!storage::is_transient(e)) throw;
      outage_started(what, e.what());
      const auto stopped = [this] { return stop_ != nullptr && stop_->load(); };
      if (stopped())
        throw GaveUpOnDatabase(str_cat("stopped (Ctrl-C or SIGTERM) while database ", database_,
                                       " took no writes, trying to ", what, ": ",
                                       storage::explain_storage_error(e.code(), e.what(), database_)));
      if (seconds_since(start) > budget_)
        throw GaveUpOnDatabase(str_cat("gave up on database ", database_, " after ", static_cast<long>(budget_),
                                       " s of failed writes (--db-retry) while trying to ", what, ": ",
                                       storage::explain_storage_error(e.code(), e.what(), database_)));
      // The back-off in slices, so that a stop is seen within 0.1 s.
      const auto wake = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(backoff));
      while (Clock::now() < wake && !stopped()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      backoff = std::min(backoff * 2, 5.0);
    }
  }
}

void DurableWrites::fact(std::int64_t run_id, const std::string& key, const std::string& value) {
  if (dropped_.count(run_id) > 0) return;
  facts_.push_back({run_id, key, value});
  flush_facts();
}

double DurableWrites::outage_seconds() const { return in_outage_ ? seconds_since(outage_since_) : 0.0; }

bool DurableWrites::flush_facts() {
  // In order, so that a key set twice ends with its last value; a held run's wait.
  auto f = facts_.begin();
  while (f != facts_.end()) {
    if (held_.count(f->run_id) > 0) {
      ++f;
      continue;
    }
    try {
      recorder_.record_fact(f->run_id, f->key, f->value);
    } catch (const StorageError& e) {
      if (!storage::is_transient(e)) throw;
      outage_started("record a fact", e.what());
      fact_error_ = e.what();
      fact_error_code_ = e.code();
      return false;
    }
    f = facts_.erase(f);
  }
  return true;
}

bool DurableWrites::facts_waiting() const {
  return std::any_of(facts_.begin(), facts_.end(),
                     [this](const storage::Journal::Fact& f) { return held_.count(f.run_id) == 0; });
}

void DurableWrites::hold_facts(std::int64_t run_id) { held_.insert(run_id); }

void DurableWrites::release_facts(std::int64_t run_id) { held_.erase(run_id); }

void DurableWrites::drop_facts(std::int64_t run_id) {
  std::erase_if(facts_, [run_id](const storage::Journal::Fact& f) { return f.run_id == run_id; });
  held_.erase(run_id);
  dropped_.insert(run_id);
}

void DurableWrites::flush_facts_or_throw() {
  // The error that kept them pending, with its own code: a full disk is not a lock.
  if (!flush_facts()) throw StorageError(fact_error_, fact_error_code_);
}

void DurableWrites::write_facts() {
  retry("record the run's facts", [this] { flush_facts_or_throw(); });
}

void DurableWrites::drain(storage::SqliteSink& sink) {
  retry(str_cat("write the last metrics of run ", sink.run_id()), [&sink] {
    sink.flush();
    if (sink.pending() > 0) throw StorageError(sink.last_error(), sink.last_error_code());
  });
}

std::string DurableWrites::write_journal(const std::vector<storage::SqliteSink*>& sinks,
                                         const std::vector<storage::Journal::Status>& statuses) {
  storage::Journal journal = storage::new_journal(database_);
  for (storage::SqliteSink* sink : sinks) {
    if (sink == nullptr) continue;
    auto rows = sink->take_pending();
    if (!rows.empty()) journal.metrics.push_back({sink->run_id(), std::move(rows)});
  }
  journal.statuses = statuses;
  for (auto& f : facts_)
    if (held_.count(f.run_id) == 0) journal.facts.push_back(std::move(f));
  facts_.clear();
  if (journal.empty()) return "";
  return storage::write_journal(journal);
}

}  // namespace laconic::controller
