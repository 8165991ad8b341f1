#pragma once
// A metric's series as the browser draws it: at most a few points per pixel, chosen so that
// nothing is hidden. Each bucket of consecutive steps keeps its lowest and its highest point
// (never a sample), so a one-step spike among a million points stays visible at every zoom;
// zooming in asks for the finer points of the range.
#include <cstdint>
#include <vector>

namespace laconic::ui {

struct SeriesPoint {
  std::int64_t step = 0;
  double value = 0;
  double wall = 0;  ///< the record's wall time (seconds since the run started, on its rank's clock)
  double bytes = 0;      ///< bytes the worker sent up to this step (when asked for; else 0)
  double projected = 0;  ///< its steps' projected seconds up to this step (when asked for; else 0)
  bool operator==(const SeriesPoint&) const = default;
};

/// `points` (ordered by step) as they are when they are at most 2 x `buckets`; else the steps are
/// cut into `buckets` equal ranges and each range keeps its minimum and its maximum value (in
/// step order; one point when they are the same point), and its first NaN where it has one, so a
/// diverged step is never hidden either: at most 3 x `buckets` points.
std::vector<SeriesPoint> downsample(const std::vector<SeriesPoint>& points, std::size_t buckets);

}  // namespace laconic::ui
