// GET /api/compare: one metric of several runs as the compare page overlays it, the seeds of a
// configuration grouped into their mean and its band of one standard deviation (ui/api.hpp).
// The page draws these curves; it averages nothing itself.
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "storage/queries.hpp"
#include "ui/api.hpp"

namespace laconic::ui {
namespace {

using nlohmann::json;

// The mean and the sample standard deviation (0 for one value) of the finite values; nothing
// when there is none.
std::optional<std::pair<double, double>> mean_and_sd(const std::vector<double>& values) {
  double sum = 0;
  std::size_t n = 0;
  for (const double v : values)
    if (std::isfinite(v)) sum += v, ++n;
  if (n == 0) return std::nullopt;
  const double mean = sum / static_cast<double>(n);
  double squares = 0;
  for (const double v : values)
    if (std::isfinite(v)) squares += (v - mean) * (v - mean);
  return std::pair{mean, n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0};
}

// The axis as the answer names it, and a point's place on it.
const char* axis_name(CompareX x) {
  switch (x) {
    case CompareX::Wall: return "wall";
    case CompareX::Bytes: return "bytes";
    case CompareX::Projected: return "projected";
    case CompareX::Step: break;
  }
  return "step";
}

double place_on(CompareX x, const SeriesPoint& p) {
  switch (x) {
    case CompareX::Wall: return p.wall;
    case CompareX::Bytes: return p.bytes;
    case CompareX::Projected: return p.projected;
    case CompareX::Step: break;
  }
  return static_cast<double>(p.step);
}

// One run's series as step -> (value, its place on axis x).
std::map<std::int64_t, std::pair<double, double>> points_of(const std::vector<SeriesPoint>& series, CompareX x) {
  std::map<std::int64_t, std::pair<double, double>> out;
  for (const SeriesPoint& p : series) out[p.step] = {p.value, place_on(x, p)};
  return out;
}

struct Group {
  std::string label;
  std::vector<std::map<std::int64_t, std::pair<double, double>>> runs;
};

// A group's curve: at every step some run recorded, the mean over its runs (and their standard
// deviation), placed at the step or at the mean over its runs of the axis there (points_of
// placed each run's points on the query's axis already).
json curve_json(const Group& group, const std::set<std::int64_t>& steps) {
  json xs = json::array(), means = json::array(), sds = json::array();
  for (const std::int64_t step : steps) {
    std::vector<double> ys, at;
    for (const auto& run : group.runs)
      if (const auto it = run.find(step); it != run.end()) ys.push_back(it->second.first), at.push_back(it->second.second);
    const auto y = mean_and_sd(ys);
    if (!y) continue;
    const auto place = mean_and_sd(at);  // on the step axis, the step itself
    if (!place) continue;
    xs.push_back(place->first);
    means.push_back(y->first);
    sds.push_back(y->second);
  }
  return {{"label", group.label}, {"n", group.runs.size()}, {"x", xs}, {"mean", means}, {"sd", sds}};
}

}  // namespace

json compare_json(storage::Database& db, const CompareQuery& query) {
  SeriesQuery series;
  series.key = query.key;
  series.worker = 0;
  series.buckets = query.buckets;
  series.bytes = query.x == CompareX::Bytes;
  series.projected = query.x == CompareX::Projected;
  std::vector<std::string> order;
  std::map<std::string, Group> groups;
  std::set<std::int64_t> steps;
  for (const std::int64_t id : query.runs) {
    const storage::RunRow row = storage::require_run(db, id);
    // The run less its seed, as the runs page keys it; each run alone without bands.
    const std::string key = query.bands ? storage::configuration_key(row) : std::to_string(id);
    if (!groups.count(key)) {
      order.push_back(key);
      groups[key].label = query.bands ? storage::configuration_label(row) : "run " + std::to_string(id) + ": " + row.name;
    }
    auto points = points_of(read_series(db, id, series).points, query.x);
    for (const auto& [step, point] : points) steps.insert(step);
    groups[key].runs.push_back(std::move(points));
  }
  json curves = json::array();
  for (const std::string& key : order) curves.push_back(curve_json(groups[key], steps));
  return {{"key", query.key}, {"x", axis_name(query.x)}, {"bands", query.bands}, {"curves", curves}};
}

}  // namespace laconic::ui
