#include "engine/compress/topk.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/sparse_pairs.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<TopkOptions> TopkOptions::fields() {
  using O = TopkOptions;
  return OptionFields<O>()
      .field("ratio", &O::ratio, "fraction of elements sent per step")
      .flag("error_feedback", &O::error_feedback, "accumulate what was not sent and add it to the next gradient");
}

std::size_t topk_count(double ratio, std::size_t n) {
  LACONIC_ENFORCE(ratio > 0.0 && ratio <= 1.0, "a ratio in (0, 1], got ", ratio,
                  " (a ratio given as a function is set by set_step() before each step)");
  if (n == 0) return 0;
  auto k = static_cast<std::size_t>(std::ceil(ratio * static_cast<double>(n)));
  return std::clamp<std::size_t>(k, 1, n);
}

std::size_t topk_payload_bytes(std::size_t k) { return sparse_pairs_bytes(k); }

namespace {

// NaN counts as the largest magnitude: it keeps nth_element's ordering valid and sends the NaN
// on, where divergence shows up instead of hiding in the residual.
inline float magnitude(float v) { return std::isnan(v) ? INFINITY : std::fabs(v); }

}  // namespace

namespace {

// Below this many elements (twice the sample) or above this kept fraction, every element is a
// candidate. The filter pays from there: at LeNet-5's 61,706 elements and 1% it selects in 0.06 ms
// against 0.59 ms for nth_element over all of them (laconic_compress_bench --sizes=61706).
constexpr std::size_t kFilterMinElements = 1 << 13;
constexpr double kFilterMaxRatio = 0.1;
// Elements sampled to guess a threshold that lets about twice k elements through.
constexpr std::size_t kSampleSize = 4096;

// Writes the selected (index, value) pairs into the payload in index order: every candidate
// above `threshold`, and ties at it until k are taken.
std::size_t emit(std::span<const float> gradient, std::span<const std::uint32_t> candidates,
                 std::span<const float> candidate_magnitudes, float threshold, std::size_t ties, std::size_t k,
                 std::uint8_t* indices, std::uint8_t* values) {
  std::size_t taken = 0;
  for (std::size_t c = 0; c < candidates.size() && taken < k; ++c) {
    const float m = candidate_magnitudes[c];
    if (m > threshold || (m == threshold && ties > 0)) {
      if (m == threshold) --ties;
      std::memcpy(indices + 4 * taken, &candidates[c], 4);
      std::memcpy(values + 4 * taken, &gradient[candidates[c]], 4);
      ++taken;
    }
  }
  return taken;
}

// Appends every i with magnitude(v[i]) >= guess (>= 0, not NaN) to `indices`, its magnitude to
// `magnitudes`, in index order, where v is `g`, or with kAdd the corrected gradient residual + g,
// stored into `residual` in the same pass (error feedback's addition, fused). Eight elements at a
// time in two 16-byte vectors of GCC's vector extensions: magnitudes, NaN as +infinity, are
// ordered as their bits with the sign cleared are (a NaN's are above infinity's), so one integer
// compare per element finds the blocks with a candidate, and the few that have one are looked at
// element by element.
template <bool kAdd>
void collect_candidates(std::span<const float> g, std::span<float> residual, float guess,
                        std::vector<std::uint32_t>& indices, std::vector<float>& magnitudes) {
  using Floats = float __attribute__((vector_size(16)));
  using Ints = std::int32_t __attribute__((vector_size(16)));
  const Ints limit = Ints{} + std::bit_cast<std::int32_t>(guess);
  const Ints unsigned_bits = Ints{} + 0x7FFFFFFF;
  const float* v = kAdd ? residual.data() : g.data();
  const auto keep = [&](std::size_t i) {
    const float m = magnitude(v[i]);
    if (m >= guess) {
      indices.push_back(static_cast<std::uint32_t>(i));
      magnitudes.push_back(m);
    }
  };
  const std::size_t n = g.size();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Floats low, high;
    std::memcpy(&low, g.data() + i, sizeof low);
    std::memcpy(&high, g.data() + i + 4, sizeof high);
    if constexpr (kAdd) {
      Floats r_low, r_high;
      std::memcpy(&r_low, residual.data() + i, sizeof r_low);
      std::memcpy(&r_high, residual.data() + i + 4, sizeof r_high);
      low += r_low;
      high += r_high;
      std::memcpy(residual.data() + i, &low, sizeof low);
      std::memcpy(residual.data() + i + 4, &high, sizeof high);
    }
    const Ints passed =
        ((std::bit_cast<Ints>(low) & unsigned_bits) >= limit) | ((std::bit_cast<Ints>(high) & unsigned_bits) >= limit);
    std::uint64_t any[2];
    std::memcpy(any, &passed, sizeof any);
    if ((any[0] | any[1]) == 0) continue;
    for (std::size_t j = i; j < i + 8; ++j) keep(j);
  }
  for (; i < n; ++i) {
    if constexpr (kAdd) residual[i] += g[i];
    keep(i);
  }
}

// The k-th largest of `magnitudes` (reordered in place) and how many are strictly above it.
std::pair<float, std::size_t> kth_largest(std::vector<float>& magnitudes, std::size_t k) {
  const auto cut = magnitudes.end() - static_cast<std::ptrdiff_t>(k);
  std::nth_element(magnitudes.begin(), cut, magnitudes.end());
  const float threshold = *cut;
  const auto above =
      static_cast<std::size_t>(std::count_if(cut + 1, magnitudes.end(), [&](float m) { return m > threshold; }));
  return {threshold, above};
}

// A magnitude about 2k of the n elements of g (of residual + g with a residual) reach, guessed
// from a strided sample of kSampleSize of them (reordered in `scratch`).
float sampled_threshold(std::span<const float> g, std::span<const float> residual, std::size_t k,
                        std::vector<float>& scratch) {
  const std::size_t n = g.size();
  scratch.resize(kSampleSize);
  for (std::size_t s = 0; s < kSampleSize; ++s) {
    const std::size_t i = s * n / kSampleSize;
    scratch[s] = magnitude(residual.empty() ? g[i] : residual[i] + g[i]);
  }
  const auto keep =
      static_cast<std::size_t>(std::ceil(2.0 * static_cast<double>(k) / static_cast<double>(n) * kSampleSize));
  return kth_largest(scratch, std::clamp<std::size_t>(keep, 1, kSampleSize)).first;
}

}  // namespace

void TopkCodec::compress(std::span<const float> gradient, Payload& payload) { encode(gradient, {}, payload); }

void TopkCodec::compress_corrected(std::span<const float> gradient, std::span<float> residual, Payload& payload) {
  encode(gradient, residual, payload);
}

void TopkCodec::encode(std::span<const float> gradient, std::span<float> residual, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "topk handles at most 2^32-1 ", "elements, got ", n);
  const std::size_t k = topk_count(ratio_, n);
  payload.resize(topk_payload_bytes(k));
  const std::uint32_t header[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k)};
  std::memcpy(payload.data(), header, sizeof header);
  std::uint8_t* indices = payload.data() + 8;
  std::uint8_t* values = indices + 4 * k;
  if (k == 0) return;  // n = 0: nothing to add either

  // Exact Top-k in two steps. A strided sample guesses a threshold that about 2k elements pass;
  // one pass collects those candidates (in index order), adding the gradient into the residual
  // under error feedback; the exact k-th largest magnitude is then selected among the candidates
  // only. If fewer than k pass (an unlucky sample), all n elements are candidates.
  const bool feedback = !residual.empty();
  bool added = false;
  candidates_.clear();
  candidate_magnitudes_.clear();
  if (n >= kFilterMinElements && ratio_ <= kFilterMaxRatio) {
    const float guess = sampled_threshold(gradient, residual, k, scratch_);
    if (feedback)
      collect_candidates<true>(gradient, residual, guess, candidates_, candidate_magnitudes_);
    else
      collect_candidates<false>(gradient, residual, guess, candidates_, candidate_magnitudes_);
    added = feedback;
  }
  if (feedback && !added)
    for (std::size_t i = 0; i < n; ++i) residual[i] += gradient[i];
  const std::span<const float> corrected = feedback ? residual : gradient;
  if (candidates_.size() < k) {
    candidates_.resize(n);
    candidate_magnitudes_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      candidates_[i] = static_cast<std::uint32_t>(i);
      candidate_magnitudes_[i] = magnitude(corrected[i]);
    }
  }
  scratch_.assign(candidate_magnitudes_.begin(), candidate_magnitudes_.end());
  const auto [threshold, above] = kth_largest(scratch_, k);
  const std::size_t taken =
      emit(corrected, candidates_, candidate_magnitudes_, threshold, k - above, k, indices, values);
  LACONIC_ENFORCE(taken == k, "selected ", taken, " entries, expected k=", k);
}

void TopkCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  add_sparse_pairs(payload, dense, "topk");
}

void TopkCodec::subtract_decoded(const Payload& payload, std::span<float> residual) const {
  subtract_sparse_pairs(payload, residual, "topk");
}

}  // namespace laconic::compress
