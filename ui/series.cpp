#include "ui/series.hpp"

#include <algorithm>
#include <cmath>

namespace laconic::ui {

std::vector<SeriesPoint> downsample(const std::vector<SeriesPoint>& points, std::size_t buckets) {
  if (buckets == 0 || points.size() <= 2 * buckets) return points;
  const double first = static_cast<double>(points.front().step);
  const double span = static_cast<double>(points.back().step) - first + 1;
  std::vector<SeriesPoint> out;
  out.reserve(3 * buckets);
  std::size_t i = 0;
  while (i < points.size()) {
    const auto bucket = static_cast<std::size_t>((static_cast<double>(points[i].step) - first) / span *
                                                 static_cast<double>(buckets));
    const SeriesPoint* low = nullptr;
    const SeriesPoint* high = nullptr;
    const SeriesPoint* nan = nullptr;
    for (; i < points.size(); ++i) {
      const SeriesPoint& p = points[i];
      const auto b = static_cast<std::size_t>((static_cast<double>(p.step) - first) / span *
                                              static_cast<double>(buckets));
      if (b != bucket) break;
      if (std::isnan(p.value)) {
        if (!nan) nan = &p;
        continue;
      }
      if (!low || p.value < low->value) low = &p;
      if (!high || p.value > high->value) high = &p;
    }
    std::vector<const SeriesPoint*> kept;
    for (const SeriesPoint* p : {low, high, nan})
      if (p && std::find(kept.begin(), kept.end(), p) == kept.end()) kept.push_back(p);
    std::sort(kept.begin(), kept.end(), [](const SeriesPoint* a, const SeriesPoint* b) { return a->step < b->step; });
    for (const SeriesPoint* p : kept) out.push_back(*p);
  }
  return out;
}

}  // namespace laconic::ui
