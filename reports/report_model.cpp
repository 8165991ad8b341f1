#include "reports/report_model.hpp"

#include <map>
#include <set>
#include <vector>

#include "engine/core/error.hpp"
#include "reports/format.hpp"
#include "reports/run_metrics.hpp"
#include "storage/queries.hpp"

namespace laconic::reports {
namespace {

// The latest run of each run name, in the order the names first appear (the plan's order).
std::vector<storage::RunRow> latest_per_name(const std::vector<storage::RunRow>& runs) {
  std::vector<std::string> order;
  std::map<std::string, storage::RunRow> latest;
  for (const auto& run : runs) {  // ordered by id, so later rows are newer
    if (!latest.count(run.name)) order.push_back(run.name);
    latest[run.name] = run;
  }
  std::vector<storage::RunRow> out;
  for (const auto& name : order) out.push_back(latest[name]);
  return out;
}

[[noreturn]] void throw_no_runs(storage::Database& db, const std::string& experiment) {
  std::set<std::string> names;
  for (const auto& e : storage::list_experiments(db)) names.insert(e.name);
  std::string known;
  for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
  throw ConfigError(str_cat("experiment '", experiment, "' has no runs in ", db.path(), "; ",
                            names.empty() ? std::string("the database has no experiments")
                                          : "experiments: " + known));
}

Table comparison_table(const std::vector<RunMetrics>& runs) {
  Table table;
  table.columns = {{"run"},
                   {"status"},
                   {"final test accuracy", Align::Right},
                   {"final train loss", Align::Right},
                   {"bytes sent", Align::Right},
                   {"dense bytes", Align::Right},
                   {"compression", Align::Right},
                   {"forward (s/step)", Align::Right},
                   {"backward (s/step)", Align::Right},
                   {"compress (s/step)", Align::Right},
                   {"communicate (s/step)", Align::Right},
                   {"wall time (s)", Align::Right}};
  for (const auto& m : runs)
    table.add_row({m.run.name, m.run.status, fixed(m.run.final_test_accuracy, 4), fixed(m.final_train_loss, 4),
                   human_bytes(m.run.bytes_sent), human_bytes(m.run.bytes_dense),
                   ratio(m.run.bytes_dense, m.run.bytes_sent), seconds(m.forward), seconds(m.backward),
                   seconds(m.compress), seconds(m.communicate), fixed(m.run.wall_time, 1)});
  return table;
}

Table epoch_table(const RunMetrics& m) {
  Table table;
  table.title = m.run.name;
  table.columns = {{"epoch", Align::Right},
                   {"test accuracy", Align::Right},
                   {"test loss", Align::Right},
                   {"epoch train loss", Align::Right}};
  for (const auto& e : m.epochs)
    table.add_row({std::to_string(e.epoch), fixed(e.test_accuracy, 4), fixed(e.test_loss, 4),
                   fixed(e.epoch_train_loss, 4)});
  return table;
}

}  // namespace

Report build_report(storage::Database& db, const std::string& experiment) {
  const auto runs = storage::list_runs(db, {.experiment = experiment, .status = std::nullopt});
  if (runs.empty()) throw_no_runs(db, experiment);

  Report report;
  report.title = "Experiment " + experiment;
  // An edited experiment file is a new experiments row; show every version the runs came from.
  for (const auto& e : storage::list_experiments(db)) {
    if (e.name != experiment) continue;
    report.facts.push_back({"file", e.file_path, true});
    report.facts.push_back({"hash", e.file_hash, true});
  }
  const auto latest = latest_per_name(runs);
  report.facts.push_back({"runs", str_cat(latest.size(), " run names, ", runs.size(), " runs recorded"), false});

  std::vector<RunMetrics> metrics;
  for (const auto& run : latest) metrics.push_back(collect_run_metrics(db, run));

  Section comparison{"Comparison",
                     "Latest run of each run name. Bytes are totals over all workers (1 MB = 10^6 bytes); "
                     "compression is dense bytes / bytes sent; times are means over steps and workers.",
                     {comparison_table(metrics)}};
  Section per_epoch{"Per epoch", "Test metrics from worker 0; epoch train loss averaged over workers.", {}};
  for (const auto& m : metrics) per_epoch.tables.push_back(epoch_table(m));
  report.sections = {std::move(comparison), std::move(per_epoch)};
  return report;
}

}  // namespace laconic::reports
