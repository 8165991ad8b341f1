#include "reports/slow_rank.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "engine/core/metric_keys.hpp"
#include "storage/statement.hpp"

namespace laconic::reports {

double PhaseSlowest::ratio() const { return median > 0 ? mean / median : std::numeric_limits<double>::quiet_NaN(); }

namespace {

// The phases, each the keys it sums (compress: both halves of the codec).
struct Phase {
  const char* name;
  std::vector<const char*> keys;
};

const std::vector<Phase>& phases() {
  static const std::vector<Phase> all = {{"forward", {keys::kTimeForward}},
                                         {"backward", {keys::kTimeBackward}},
                                         {"optimizer", {keys::kTimeOptimizer}},
                                         {"compress", {keys::kTimeCompress, keys::kTimeDecompress}},
                                         {"straggler delay", {keys::kTimeDelay}}};
  return all;
}

constexpr double kWaitedFor = 1e-3;  // seconds: the others' mean wait over the last arrival's

double median_over_ranks(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Per exchange, the rank that arrived last and what the others waited for it.
void attribute_waits(const std::map<std::int64_t, std::vector<double>>& waits, SlowRank& out) {
  const auto p = static_cast<std::size_t>(out.ranks);
  std::vector<double> caused(p, 0);
  std::vector<std::int64_t> last_count(p, 0);
  double all_waiting = 0;
  for (const auto& [step, w] : waits) {
    if (std::any_of(w.begin(), w.end(), [](double v) { return v < 0; })) continue;  // a rank missing
    ++out.exchanges;
    const auto last = static_cast<std::size_t>(std::min_element(w.begin(), w.end()) - w.begin());
    double others = 0;
    for (std::size_t r = 0; r < p; ++r) others += r == last ? 0 : w[r];
    all_waiting += others + w[last];
    if (others / static_cast<double>(p - 1) - w[last] < kWaitedFor) continue;
    ++out.waited_exchanges;
    caused[last] += others;
    ++last_count[last];
  }
  const auto most = std::max_element(caused.begin(), caused.end());
  if (*most <= 0) return;
  out.waited_for = static_cast<int>(most - caused.begin());
  out.arrived_last = last_count[static_cast<std::size_t>(out.waited_for)];
  out.caused_seconds = *most;
  out.caused_share = all_waiting > 0 ? *most / all_waiting : 0;
}

}  // namespace

std::vector<std::string> slow_rank_phases() {
  std::vector<std::string> names;
  for (const Phase& phase : phases()) names.push_back(phase.name);
  return names;
}

SlowRank slow_rank_of(storage::Database& db, std::int64_t run_id, std::int64_t workers) {
  SlowRank out;
  out.ranks = static_cast<int>(workers);
  if (workers < 2) return out;
  const auto p = static_cast<std::size_t>(workers);
  storage::Statement q(db.handle(),
                       "SELECT key, step, worker, value FROM metrics WHERE run_id = ?1 AND worker < ?2 AND epoch >= 0 "
                       "AND key IN ('time_wait', 'time_forward', 'time_backward', 'time_optimizer', 'time_compress', "
                       "'time_decompress', 'time_delay')");
  q.bind_int64(1, run_id).bind_int64(2, workers);
  std::map<std::int64_t, std::vector<double>> waits;  // step -> each rank's wait (-1: not recorded)
  std::map<std::string, std::vector<double>> sums;    // key -> each rank's sum
  std::map<std::string, std::vector<std::int64_t>> counts;
  while (q.step()) {
    const std::string key = q.column_text(0);
    const auto rank = static_cast<std::size_t>(q.column_int64(2));
    const double value = q.column_double(3);
    if (key == keys::kTimeWait) {
      auto& w = waits.try_emplace(q.column_int64(1), p, -1.0).first->second;
      w[rank] = value;
      continue;
    }
    sums.try_emplace(key, p, 0.0).first->second[rank] += value;
    ++counts.try_emplace(key, p, 0).first->second[rank];
  }
  attribute_waits(waits, out);
  for (const Phase& phase : phases()) {
    std::vector<double> means(p, 0);
    bool recorded = false;
    for (const char* key : phase.keys) {
      const auto s = sums.find(key);
      if (s == sums.end()) continue;
      recorded = true;
      for (std::size_t r = 0; r < p; ++r)
        if (const std::int64_t n = counts.at(key)[r]; n > 0) means[r] += s->second[r] / static_cast<double>(n);
    }
    if (!recorded) continue;
    const auto slowest = std::max_element(means.begin(), means.end());
    out.phases.push_back({phase.name, static_cast<int>(slowest - means.begin()), *slowest, median_over_ranks(means)});
  }
  return out;
}

}  // namespace laconic::reports

