// The downsampling that keeps every spike (ui/series.hpp), against a plain reference: each
// bucket's minimum and maximum are in the result, nothing else is, and the order is the steps'.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "ui/series.hpp"

using laconic::ui::downsample;
using laconic::ui::SeriesPoint;

namespace {

std::vector<SeriesPoint> noisy(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise;
  std::vector<SeriesPoint> points;
  for (std::size_t i = 0; i < n; ++i) points.push_back({static_cast<std::int64_t>(3 * i), noise(rng), 0.5 * static_cast<double>(i)});
  return points;
}

}  // namespace

TEST_CASE("a short series comes back as it is", "[ui][series]") {
  const auto points = noisy(200, 1);
  CHECK(downsample(points, 100) == points);
  CHECK(downsample(points, 0) == points);
}

TEST_CASE("every bucket keeps its lowest and its highest point, in step order", "[ui][series]") {
  const auto points = noisy(100000, 2);
  const std::size_t buckets = 700;
  const auto out = downsample(points, buckets);
  REQUIRE(out.size() <= 2 * buckets);
  REQUIRE(out.size() >= buckets);
  for (std::size_t i = 1; i < out.size(); ++i) CHECK(out[i - 1].step < out[i].step);
  // The reference: the same buckets by brute force.
  const double first = static_cast<double>(points.front().step);
  const double span = static_cast<double>(points.back().step) - first + 1;
  std::vector<const SeriesPoint*> low(buckets, nullptr), high(buckets, nullptr);
  for (const auto& p : points) {
    const auto b = static_cast<std::size_t>((static_cast<double>(p.step) - first) / span * buckets);
    if (!low[b] || p.value < low[b]->value) low[b] = &p;
    if (!high[b] || p.value > high[b]->value) high[b] = &p;
  }
  std::vector<SeriesPoint> expected;
  for (std::size_t b = 0; b < buckets; ++b) {
    if (!low[b]) continue;
    const SeriesPoint* first_one = low[b]->step <= high[b]->step ? low[b] : high[b];
    const SeriesPoint* second = first_one == low[b] ? high[b] : low[b];
    expected.push_back(*first_one);
    if (second != first_one) expected.push_back(*second);
  }
  CHECK(out == expected);
}

TEST_CASE("a one-step spike among a million points survives at every zoom", "[ui][series]") {
  std::vector<SeriesPoint> points;
  for (std::int64_t s = 0; s < 1000000; ++s) points.push_back({s, s == 654321 ? 1000.0 : 1.0 / (1.0 + s), 0});
  for (const std::size_t buckets : {10, 1000, 100000}) {
    const auto out = downsample(points, buckets);
    bool spike = false;
    for (const auto& p : out) spike = spike || (p.step == 654321 && p.value == 1000.0);
    CHECK(spike);
  }
}

TEST_CASE("a NaN is kept beside a bucket's extremes", "[ui][series]") {
  auto points = noisy(10000, 3);
  points[4321].value = std::numeric_limits<double>::quiet_NaN();
  const auto out = downsample(points, 100);
  std::size_t nans = 0;
  for (const auto& p : out) nans += std::isnan(p.value) ? 1 : 0;
  CHECK(nans == 1);
  CHECK(out.size() <= 3 * 100);
}
