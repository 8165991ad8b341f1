#include "engine/compress/dgc.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/core/error.hpp"

namespace laconic::compress {

namespace {

// Private stream of the threshold sample: derive_seed(run_seed, streams::kDgcSample + rank).

// NaN counts as the largest magnitude (as in Top-k), so it is sent on instead of hiding in v.
inline float magnitude(float v) { return std::isnan(v) ? INFINITY : std::fabs(v); }

// u = m*u + scale*g, written once so that the sample (before the pass) and the pass itself
// evaluate the same expression and get the same float.
inline float velocity_step(float m, float u, float scale, float g) { return m * u + scale * g; }

// The k-th largest of `magnitudes` (reordered in place) and how many are strictly above it.
std::pair<float, std::size_t> kth_largest(std::vector<float>& magnitudes, std::size_t k) {
  const auto cut = magnitudes.end() - static_cast<std::ptrdiff_t>(k);
  std::nth_element(magnitudes.begin(), cut, magnitudes.end());
  const float kth = *cut;
  const auto above =
      static_cast<std::size_t>(std::count_if(cut + 1, magnitudes.end(), [&](float m) { return m > kth; }));
  return {kth, above};
}

}  // namespace

OptionFields<DgcOptions> DgcOptions::fields() {
  using O = DgcOptions;
  return OptionFields<O>()
      .field("ratio", &O::ratio, "fraction of elements sent per step once warm-up is over")
      .number("momentum", &O::momentum,
              "momentum m of the correction u = m*u + g, v = v + u (set the optimizer's momentum to 0)",
              closed_open(0, 1))
      .number("clip_norm", &O::clip_norm,
              "L2 norm each worker clips its gradient to before the momentum; 0 = no clipping", finite_at_least(0))
      .number("sample_fraction", &O::sample_fraction, "fraction of elements sampled to estimate the threshold",
              open_closed(0, 1))
      .integer("warmup", &O::warmup, "epochs e whose ratio is max(ratio, 0.25^(e+1)); 0 = no warm-up", at_least(0));
}

double dgc_epoch_ratio(double ratio, std::int64_t warmup, std::int64_t epoch) {
  if (epoch >= warmup) return ratio;
  // Powers of 0.25 are exact in double; far epochs underflow to 0 and leave `ratio`.
  return std::max(ratio, std::pow(0.25, static_cast<double>(epoch + 1)));
}

std::size_t dgc_payload_bytes(std::size_t count) { return topk_payload_bytes(count); }

DgcCompressor::DgcCompressor(DgcOptions options)
    : options_(options),
      ratio_(options.ratio.varies() ? static_cast<double>(options.ratio)
                                    : dgc_epoch_ratio(options.ratio, options.warmup, 0)),
      rng_(derive_seed(0, streams::kDgcSample)) {}

void DgcCompressor::set_seed(std::uint64_t run_seed, int rank) {
  rng_.reseed(derive_seed(run_seed, streams::kDgcSample + static_cast<std::uint64_t>(rank)));
}

void DgcCompressor::on_epoch(std::int64_t epoch) {
  LACONIC_ENFORCE(epoch >= 0, "expected an epoch >= 0, got ", epoch);
  ratio_ = dgc_epoch_ratio(options_.ratio, options_.warmup, epoch);
}

void DgcCompressor::on_step(const StepPoint& point) {
  if (!options_.ratio.varies()) return;
  options_.ratio.set_step(point);
  ratio_ = dgc_epoch_ratio(options_.ratio, options_.warmup, point.epoch);
}

void DgcCompressor::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "dgc handles at most 2^32-1 ", "elements, got ", n);
  if (!started_) {
    u_.assign(n, 0.0f);
    v_.assign(n, 0.0f);
    started_ = true;
  }
  LACONIC_ENFORCE(v_.size() == n, "expected a gradient of ", v_.size(), " elements, got ", n);
  if (n == 0) {
    payload.assign(dgc_payload_bytes(0), 0);
    return;
  }

  float scale = 1.0f;
  if (options_.clip_norm > 0.0) {
    // Four partial sums: one chain of dependent double adds would bound the pass by add latency.
    double partial[4] = {0.0, 0.0, 0.0, 0.0};
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (std::size_t lane = 0; lane < 4; ++lane) {
        const auto x = static_cast<double>(gradient[i + lane]);
        partial[lane] += x * x;
      }
    for (; i < n; ++i) partial[0] += static_cast<double>(gradient[i]) * gradient[i];
    const double norm = std::sqrt((partial[0] + partial[1]) + (partial[2] + partial[3]));
    if (norm > options_.clip_norm) scale = static_cast<float>(options_.clip_norm / norm);
  }
  const auto m = static_cast<float>(options_.momentum);
  const float* g = gradient.data();
  float* u = u_.data();
  float* v = v_.data();

  // The threshold, from |v| after this step's update at the sampled positions, computed before
  // the pass so that one pass can update u and v and collect the candidates.
  const std::size_t k = topk_count(ratio_, n);
  const std::size_t samples = topk_count(options_.sample_fraction, n);
  sample_.resize(samples);
  for (std::size_t s = 0; s < samples; ++s) {
    const auto i = static_cast<std::size_t>(rng_.below(n));
    sample_[s] = magnitude(v[i] + velocity_step(m, u[i], scale, g[i]));
  }
  const float threshold = kth_largest(sample_, topk_count(ratio_, samples)).first;

  candidates_.clear();
  candidate_magnitudes_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const float ui = velocity_step(m, u[i], scale, g[i]);
    const float vi = v[i] + ui;
    u[i] = ui;
    v[i] = vi;
    const float mi = magnitude(vi);
    if (mi > threshold || mi == INFINITY) {
      candidates_.push_back(static_cast<std::uint32_t>(i));
      candidate_magnitudes_.push_back(mi);
    }
  }

  // More than k candidates: keep the k largest (ties at the k-th magnitude to the lowest
  // indices). Otherwise every candidate is sent.
  const bool refine = candidates_.size() > k;
  float kth = 0.0f;
  std::size_t ties = 0;
  if (refine) {
    scratch_.assign(candidate_magnitudes_.begin(), candidate_magnitudes_.end());
    const auto [value, above] = kth_largest(scratch_, k);
    kth = value;
    ties = k - above;
  }
  const std::size_t count = refine ? k : candidates_.size();
  payload.resize(dgc_payload_bytes(count));
  const std::uint32_t header[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(count)};
  std::memcpy(payload.data(), header, sizeof header);
  std::uint8_t* indices = payload.data() + 8;
  std::uint8_t* values = indices + 4 * count;
  std::size_t taken = 0;
  for (std::size_t c = 0; c < candidates_.size() && taken < count; ++c) {
    if (refine) {
      const float mc = candidate_magnitudes_[c];
      if (mc < kth) continue;
      if (mc == kth) {
        if (ties == 0) continue;
        --ties;
      }
    }
    const std::uint32_t i = candidates_[c];
    std::memcpy(indices + 4 * taken, &i, 4);
    std::memcpy(values + 4 * taken, &v[i], 4);
    // Momentum factor masking: what is sent leaves both the accumulation and the momentum.
    u[i] = 0.0f;
    v[i] = 0.0f;
    ++taken;
  }
  LACONIC_ENFORCE(taken == count, "selected ", taken, " entries, expected ", count);
}

}  // namespace laconic::compress
