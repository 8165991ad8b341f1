#include "engine/compress/dct_chunks.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "engine/core/error.hpp"

namespace laconic::compress {

std::int64_t chunk_side(std::int64_t n, std::int64_t target) {
  LACONIC_ENFORCE(n >= 1 && target >= 1, "chunk_side of ", n, " near ", target);
  for (std::int64_t side = std::min(n, target); side > 1; --side)
    if (n % side == 0) return side;
  return 1;
}

std::vector<float> dct_basis(std::int64_t n) {
  const auto size = static_cast<std::size_t>(n);
  std::vector<float> basis(size * size);
  for (std::size_t i = 0; i < size; ++i)
    for (std::size_t k = 0; k < size; ++k) {
      const double scale = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(n));
      const double angle = std::numbers::pi * static_cast<double>((2 * i + 1) * k) / (2.0 * static_cast<double>(n));
      basis[i * size + k] = static_cast<float>(scale * std::cos(angle));
    }
  return basis;
}

namespace {

// b^T: element (k, i) of the transposed basis.
std::vector<float> transposed(const std::vector<float>& b, std::size_t n) {
  std::vector<float> t(b.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k) t[k * n + i] = b[i * n + k];
  return t;
}

// out[r][c] = sum_j a[r][j] m[j][c], a with `rows` rows of `inner`, m `inner` x `cols`: the
// inner loop runs along rows of m and out.
void multiply_rows(const float* a, std::size_t a_stride, std::size_t rows, std::size_t inner, const float* m,
                   std::size_t cols, float* out, std::size_t out_stride) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* o = out + r * out_stride;
    std::fill(o, o + cols, 0.0f);
    for (std::size_t j = 0; j < inner; ++j) {
      const float x = a[r * a_stride + j];
      const float* row = m + j * cols;
      for (std::size_t c = 0; c < cols; ++c) o[c] += x * row[c];
    }
  }
}

}  // namespace

DctChunks::DctChunks(const std::vector<std::int64_t>& shape, std::int64_t target_side) {
  LACONIC_ENFORCE(!shape.empty(), "DctChunks of a layer without a shape");
  if (shape.size() == 1) {
    cols_ = static_cast<std::size_t>(shape[0]);
  } else {
    rows_ = static_cast<std::size_t>(shape[0]);
    cols_ = static_cast<std::size_t>(
        std::accumulate(shape.begin() + 1, shape.end(), std::int64_t{1}, std::multiplies<>()));
    side_rows_ = static_cast<std::size_t>(chunk_side(shape[0], target_side));
  }
  side_cols_ = static_cast<std::size_t>(chunk_side(static_cast<std::int64_t>(cols_), target_side));
  LACONIC_ENFORCE(side_rows_ * side_cols_ <= 65536, "a DCT chunk of ", side_rows_, " x ", side_cols_,
                  " has positions beyond 16 bits");
  row_basis_ = dct_basis(static_cast<std::int64_t>(side_rows_));
  col_basis_ = dct_basis(static_cast<std::int64_t>(side_cols_));
  col_transposed_ = transposed(col_basis_, side_cols_);
  row_transposed_ = transposed(row_basis_, side_rows_);
}

void DctChunks::encode(std::span<const float> x, std::span<float> coefficients) const {
  LACONIC_ENFORCE(x.size() == elements() && coefficients.size() == elements(), "DctChunks::encode of ", x.size(),
                  " into ", coefficients.size(), " for a layer of ", elements());
  const std::size_t n1 = side_rows_, n2 = side_cols_;
  std::vector<float> half(n1 * n2);
  float* out = coefficients.data();
  for (std::size_t cy = 0; cy < rows_ / n1; ++cy)
    for (std::size_t cx = 0; cx < cols_ / n2; ++cx, out += n1 * n2) {
      // half = X F2 (the block's rows in the column basis), then out = F1^T half.
      multiply_rows(x.data() + cy * n1 * cols_ + cx * n2, cols_, n1, n2, col_basis_.data(), n2, half.data(), n2);
      multiply_rows(row_transposed_.data(), n1, n1, n1, half.data(), n2, out, n2);
    }
}

void DctChunks::decode(std::span<const float> coefficients, std::span<float> x) const {
  LACONIC_ENFORCE(x.size() == elements() && coefficients.size() == elements(), "DctChunks::decode of ",
                  coefficients.size(), " into ", x.size(), " for a layer of ", elements());
  const std::size_t n1 = side_rows_, n2 = side_cols_;
  std::vector<float> half(n1 * n2);
  const float* in = coefficients.data();
  for (std::size_t cy = 0; cy < rows_ / n1; ++cy)
    for (std::size_t cx = 0; cx < cols_ / n2; ++cx, in += n1 * n2) {
      // half = C F2^T, then the block = F1 half.
      multiply_rows(in, n2, n1, n2, col_transposed_.data(), n2, half.data(), n2);
      multiply_rows(row_basis_.data(), n1, n1, n1, half.data(), n2, x.data() + cy * n1 * cols_ + cx * n2, cols_);
    }
}

void DctChunks::subtract_decoded(const ChunkTopk& top, std::span<float> x) const {
  LACONIC_ENFORCE(x.size() == elements() && top.index.size() == chunks() * top.k, "DctChunks::subtract_decoded of ",
                  top.index.size(), " positions from a layer of ", x.size(), " in ", chunks(), " chunks");
  const std::size_t n1 = side_rows_, n2 = side_cols_, across = cols_ / n2;
  for (std::size_t i = 0; i < top.index.size(); ++i) {
    const std::size_t chunk = i / top.k, b = top.index[i] / n2, d = top.index[i] % n2;
    float* block = x.data() + (chunk / across) * n1 * cols_ + (chunk % across) * n2;
    const float* column = col_transposed_.data() + d * n2;  // F2[w][d] over w
    for (std::size_t h = 0; h < n1; ++h) {
      const float f = top.value[i] * row_basis_[h * n1 + b];
      float* row = block + h * cols_;
      for (std::size_t w = 0; w < n2; ++w) row[w] -= f * column[w];
    }
  }
}

ChunkTopk extract_topk(std::span<const float> coefficients, std::size_t chunk_elements, std::size_t k) {
  LACONIC_ENFORCE(chunk_elements > 0 && coefficients.size() % chunk_elements == 0, "extract_topk: ",
                  coefficients.size(), " coefficients in chunks of ", chunk_elements);
  ChunkTopk out;
  out.k = std::clamp<std::size_t>(k, 1, chunk_elements);
  const std::size_t chunks = coefficients.size() / chunk_elements;
  out.index.reserve(chunks * out.k);
  out.value.reserve(chunks * out.k);
  std::vector<std::uint16_t> order(chunk_elements);
  for (std::size_t c = 0; c < chunks; ++c) {
    const float* chunk = coefficients.data() + c * chunk_elements;
    std::iota(order.begin(), order.end(), std::uint16_t{0});
    const auto larger = [chunk](std::uint16_t a, std::uint16_t b) {
      const float ma = std::fabs(chunk[a]), mb = std::fabs(chunk[b]);
      return ma > mb || (ma == mb && a < b);
    };
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(out.k - 1), order.end(), larger);
    std::sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(out.k));
    for (std::size_t i = 0; i < out.k; ++i) {
      out.index.push_back(order[i]);
      out.value.push_back(chunk[order[i]]);
    }
  }
  return out;
}

void scatter_mean(const std::vector<const ChunkTopk*>& sent, std::size_t chunk_elements, std::span<float> coefficients) {
  std::fill(coefficients.begin(), coefficients.end(), 0.0f);
  std::vector<std::uint32_t> senders(coefficients.size(), 0);
  for (const ChunkTopk* from : sent) {
    LACONIC_ENFORCE(from->index.size() * chunk_elements == coefficients.size() * from->k, "scatter_mean: ",
                    from->index.size(), " positions of ", from->k, " a chunk for ", coefficients.size(),
                    " coefficients in chunks of ", chunk_elements);
    for (std::size_t i = 0; i < from->index.size(); ++i) {
      const std::size_t at = (i / from->k) * chunk_elements + from->index[i];
      coefficients[at] += from->value[i];
      ++senders[at];
    }
  }
  for (std::size_t i = 0; i < coefficients.size(); ++i)
    if (senders[i] > 1) coefficients[i] /= static_cast<float>(senders[i]);
}

}  // namespace laconic::compress
