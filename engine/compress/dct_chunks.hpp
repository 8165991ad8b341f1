#pragma once
// DeMo's transform and extraction (Peng, Quesnelle, Kingma 2024, arXiv 2411.19870; the arithmetic
// of its released demo.py): a layer cut into chunks (64 x 64 for a matrix, 64 for a vector), each
// chunk's orthonormal DCT-II, the k largest coefficients of each chunk by magnitude, and their
// decoding, where several workers' coefficients at one place are averaged over the workers that
// sent one there. The DeMo optimizer (issue 66) builds on these; they know nothing of tensors.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace laconic::compress {

/// The largest divisor of `n` not above `target` (demo.py's _get_smaller_split): a chunk side
/// that tiles `n` exactly.
std::int64_t chunk_side(std::int64_t n, std::int64_t target);

/// The orthonormal DCT-II basis of size n, row-major: basis[i * n + k] = c_k cos(pi (2i + 1) k /
/// (2n)), c_0 = sqrt(1 / n), c_k = sqrt(2 / n). Coefficient k of x is sum_i x_i basis[i * n + k];
/// x_i is sum_k coefficient_k basis[i * n + k] (the basis is orthogonal).
std::vector<float> dct_basis(std::int64_t n);

struct ChunkTopk;

/// One layer's chunks: a matrix [rows, cols] (a tensor of more dimensions is taken as [its first,
/// the product of the rest]) cut into blocks of chunk_side(rows) x chunk_side(cols), a vector into
/// runs of chunk_side(size). Coefficients are chunk after chunk (row of chunks by row of chunks),
/// each chunk's row-major (coefficient (b, d) of a block at b * its width + d).
class DctChunks {
 public:
  DctChunks(const std::vector<std::int64_t>& shape, std::int64_t target_side);

  std::size_t elements() const { return rows_ * cols_; }
  std::size_t chunks() const { return elements() / chunk_elements(); }
  std::size_t chunk_elements() const { return side_rows_ * side_cols_; }

  /// Each chunk's 2D (or 1D) DCT-II of the layer `x` (elements() values), into `coefficients`.
  void encode(std::span<const float> x, std::span<float> coefficients) const;
  /// The inverse: the layer whose chunks have these coefficients.
  void decode(std::span<const float> coefficients, std::span<float> x) const;
  /// x -= the decoding of coefficients that are zero but at `top`'s positions (each chunk's k):
  /// k x chunk_elements() multiply-adds a chunk where decode() takes chunk_elements() x (rows +
  /// columns of a chunk).
  void subtract_decoded(const ChunkTopk& top, std::span<float> x) const;

 private:
  std::size_t rows_ = 1, cols_ = 1;            // a vector is one row
  std::size_t side_rows_ = 1, side_cols_ = 1;  // a chunk's
  std::vector<float> row_basis_, col_basis_;
  std::vector<float> col_transposed_;  // col_basis_^T: element (d, w)
  std::vector<float> row_transposed_;  // row_basis_^T: element (b, h)
};

/// Each chunk's k coefficients of largest magnitude (k clamped to [1, chunk_elements]): per
/// chunk, k positions inside it and their values, chunk after chunk.
struct ChunkTopk {
  std::size_t k = 0;
  std::vector<std::uint16_t> index;  ///< chunks x k positions within their chunk (< 65536)
  std::vector<float> value;          ///< the coefficients there
};

/// Extracts ChunkTopk from `coefficients` (chunks of `chunk_elements`). Among equal magnitudes
/// the earlier position wins.
ChunkTopk extract_topk(std::span<const float> coefficients, std::size_t chunk_elements, std::size_t k);

/// Coefficients from the workers' extractions (each of the same layer): at each position the
/// mean of the values sent there, over the workers that sent one (demo.py's scatter_reduce
/// "mean" without the zeros); 0 where none did.
void scatter_mean(const std::vector<const ChunkTopk*>& sent, std::size_t chunk_elements, std::span<float> coefficients);

}  // namespace laconic::compress
