// The list of every run name's latest run, whatever its status.
#include "engine/core/metric_keys.hpp"
#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {

Section runs_section(const ExperimentRuns& runs, const TestMetric& metric) {
  Table table;
  table.slug = "runs";
  table.columns = {{"run"},
                   {"status"},
                   {"final test accuracy", Align::Right},
                   {"bytes sent", Align::Right},
                   {"dense bytes", Align::Right},
                   {"compression", Align::Right},
                   {"wall time (s)", Align::Right},
                   {"error"}};
  table.csv.header = {"run_id",          "run",         "status", "final_test_accuracy", keys::kBytesSent,
                      keys::kBytesDense, "wall_time_s", "error"};
  for (const auto& r : runs.latest)
    table.add_row({r.name, storage::to_string(r.status), fixed(r.final_test_accuracy, 4), human_bytes(r.bytes_sent),
                   human_bytes(r.bytes_dense), ratio_text(r.compression_ratio()), fixed(r.wall_time, 1), r.error},
                  {std::to_string(r.id), r.name, storage::to_string(r.status), raw_number(r.final_test_accuracy),
                   raw_number(r.bytes_sent), raw_number(r.bytes_dense), raw_number(r.wall_time), r.error});
  for (std::size_t i = 0; i < runs.latest.size(); ++i) table.subjects[i].run_id = runs.latest[i].id;
  std::string text =
      "The latest run of each run name, whatever its status. Bytes are totals over all ranks, "
      "parameter servers included (1 MB = 10^6 bytes); compression is dense bytes / bytes sent.";
  if (metric.key != keys::kTestAccuracy) text += " Test accuracy here is next-token accuracy.";
  return {"Runs", text, {std::move(table)}, {}};
}

}  // namespace laconic::reports
