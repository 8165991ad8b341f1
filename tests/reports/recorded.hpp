#pragma once
// A database of one experiment, "answer", that report tests record runs into (fixture.hpp's
// RunSpec) and write its report from.
#include <memory>
#include <string>

#include "reports/report.hpp"
#include "storage/recorder.hpp"
#include "tests/reports/fixture.hpp"

namespace laconic::reports::testing {

struct Recorded {
  TempDir dir;
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::Recorder> recorder;
  std::int64_t experiment = 0;

  explicit Recorded(const std::string& tag)
      : dir(tag), db(storage::Database::open(dir.file("runs.db"))), recorder(new storage::Recorder(*db)) {
    experiment = recorder->add_experiment("answer", "answer.lua", "cafe");
  }
  std::int64_t add(const RunSpec& spec) { return record_run(*db, *recorder, experiment, "answer", spec); }
  std::string markdown(const ReportOptions& options) {
    return read_text(write_report(*db, "answer", dir.file("out"), options).markdown);
  }
  std::string csv(const std::string& table) { return read_text(dir.file("out/tables/" + table + ".csv")); }
};

}  // namespace laconic::reports::testing
