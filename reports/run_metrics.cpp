#include "reports/run_metrics.hpp"

#include <cmath>
#include <map>
#include <string>

namespace laconic::reports {
namespace {

double mean_of(const std::map<std::string, storage::Summary>& summary, const std::string& key) {
  const auto it = summary.find(key);
  if (it == summary.end() || it->second.count == 0) return std::numeric_limits<double>::quiet_NaN();
  return it->second.sum / static_cast<double>(it->second.count);
}

struct Mean {
  double sum = 0;
  int count = 0;
  double value() const { return count == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / count; }
};

}  // namespace

RunMetrics collect_run_metrics(storage::Database& db, const storage::RunRow& run) {
  RunMetrics out;
  out.run = run;
  const auto summary = storage::summary_of(db, run.id);
  out.forward = mean_of(summary, "time_forward");
  out.backward = mean_of(summary, "time_backward");
  out.compress = mean_of(summary, "time_compress");
  out.communicate = mean_of(summary, "time_communicate");

  std::map<std::int64_t, EpochMetrics> epochs;
  std::map<std::int64_t, Mean> train_losses;
  // Only worker 0 evaluates; if another worker's value shows up, worker 0's still wins.
  auto take_worker0 = [&](const std::string& key, double EpochMetrics::*field) {
    for (const auto& r : storage::metrics_of(db, run.id, key)) {
      EpochMetrics& e = epochs[r.epoch];
      e.epoch = r.epoch;
      if (r.worker == 0 || std::isnan(e.*field)) e.*field = r.value;
    }
  };
  take_worker0("test_accuracy", &EpochMetrics::test_accuracy);
  take_worker0("test_loss", &EpochMetrics::test_loss);
  for (const auto& r : storage::metrics_of(db, run.id, "epoch_train_loss")) {
    epochs[r.epoch].epoch = r.epoch;
    train_losses[r.epoch].sum += r.value;
    ++train_losses[r.epoch].count;
  }
  for (auto& [epoch, e] : epochs) {
    if (train_losses.count(epoch)) e.epoch_train_loss = train_losses[epoch].value();
    out.epochs.push_back(e);
  }

  if (!train_losses.empty()) {
    out.final_train_loss = train_losses.rbegin()->second.value();
  } else if (const auto it = summary.find("train_loss"); it != summary.end()) {
    out.final_train_loss = it->second.last;
  }
  return out;
}

}  // namespace laconic::reports
