#pragma once
// The compressors' kernels on device memory: each function enqueues its kernels on `stream` and
// returns at once. The host API (kernels.hpp) wraps them with copies in and out;
// bench/cuda/compress_cuda_bench times them on device-resident gradients, as a GPU trainer
// would hold them. Payloads are the CPU codecs' bytes, in device memory. CUDA code only (nvcc).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/compress/cuda/device.cuh"
#include "engine/compress/cuda/kernels.hpp"

namespace laconic::compress::cuda::device {

/// Device scratch for Top-k's selection and TernGrad's scale, sized once for gradients of up to
/// `max_elements`: a digit histogram, the selection's state, per-tile counts, and room for Top-k's
/// candidates (an index and a value each: 8 bytes an element).
class Workspace {
 public:
  explicit Workspace(std::size_t max_elements);
  std::size_t max_elements() const { return max_elements_; }
  std::uint32_t* histogram() const;    // 4096 words
  std::uint32_t* state() const;        // 8 words
  std::uint32_t* tile_counts() const;  // 2 per tile
  std::uint32_t* candidates() const { return candidates_.get(); }
  float* candidate_values() const { return candidate_values_.get(); }

 private:
  std::size_t max_elements_;
  DeviceBuffer<std::uint32_t> words_;
  DeviceBuffer<std::uint32_t> candidates_;
  DeviceBuffer<float> candidate_values_;
};

// ---- elementwise.cu ----
void fp16_encode(const float* values, std::uint16_t* bits, std::size_t n, cudaStream_t stream);
void bf16_encode(const float* values, std::uint16_t* bits, std::size_t n, cudaStream_t stream);
void fp16_decode_add(const std::uint16_t* bits, float* dense, std::size_t n, cudaStream_t stream);
void bf16_decode_add(const std::uint16_t* bits, float* dense, std::size_t n, cudaStream_t stream);
/// (n + 7) / 8 bytes of sign bits (element::negative_bit), element i at byte i / 8, bit i % 8.
void pack_negative_bits(const float* values, std::uint8_t* bits, std::size_t n, cudaStream_t stream);
/// QSGD codes from the given uniforms and per-bucket norms (kernels.hpp's qsgd_codes).
void qsgd_codes(const float* values, const float* uniforms, const float* norms, std::size_t bucket_size, float s,
                std::uint32_t* codes, std::size_t n, cudaStream_t stream);
/// `bits`-bit codes packed LSB first into (n * bits + 7) / 8 bytes (bitpack.hpp's layout).
void pack_fixed(const std::uint32_t* codes, unsigned bits, std::uint8_t* packed, std::size_t n, cudaStream_t stream);
/// out[j] = values[indices[j]] for j < k.
void gather(const float* values, const std::uint32_t* indices, float* out, std::size_t k, cudaStream_t stream);
/// residual[i] = element::residual_after(residual[i], sent[i]).
void subtract_sent(float* residual, const float* sent, std::size_t n, cudaStream_t stream);

// ---- terngrad.cu ----
/// TernGrad's codes (4 a byte) for the given scale and one given uniform per element.
void terngrad_codes(const float* gradient, const float* uniforms, float scale, std::uint8_t* codes, std::size_t n,
                    cudaStream_t stream);
/// A whole TernGrad payload (the CPU codec's layout: n, scale = max |g| or NaN, codes), element
/// i's uniform from element::splitmix64_at(seed, i).
void terngrad_compress(const float* gradient, std::size_t n, std::uint64_t seed, std::uint8_t* payload,
                       const Workspace& workspace, cudaStream_t stream);
/// dense += the payload's values. Trusts its codes: the caller refuses code 3 first, as the CPU
/// decoder does.
void terngrad_decode_add(const std::uint8_t* payload, float* dense, std::size_t n, cudaStream_t stream);

// ---- topk.cu ----
/// The Top-k payload of `values` (the CPU codec's bytes: n, k, then k indices ascending and their
/// values; the k largest magnitudes, ties at the k-th to the lowest indices), k >= 1.
/// `path` picks the prefilter (kernels.hpp's TopkPath); every path gives the same bytes.
void topk_compress(const float* values, std::size_t n, std::size_t k, std::uint8_t* payload, const Workspace& workspace,
                   cudaStream_t stream, TopkPath path = TopkPath::automatic);
/// Top-k with error feedback, fused: residual += gradient inside the first selection pass, the
/// payload selected from the sum, and the sent elements taken off the residual as they are
/// written (TopkCompressor with error feedback, bit for bit on finite values).
void topk_compress_with_feedback(const float* gradient, float* residual, std::size_t n, std::size_t k,
                                 std::uint8_t* payload, const Workspace& workspace, cudaStream_t stream,
                                 TopkPath path = TopkPath::automatic);
/// dense[index] += value for the k pairs of a sparse-pairs payload (indices trusted: the caller
/// checks them as the CPU decoder does).
void sparse_pairs_add(const std::uint8_t* payload, std::size_t k, float* dense, cudaStream_t stream);

// ---- block_randomk.cu ----
/// block[j] = values[offset + j] for j < k.
void block_copy(const float* values, std::size_t offset, std::size_t k, float* block, cudaStream_t stream);
/// Block-random-k with error feedback in one pass: residual += gradient, the block [offset,
/// offset + k) of the sum sent, and taken off the residual.
void block_with_feedback(const float* gradient, float* residual, std::size_t n, std::size_t offset, std::size_t k,
                         float* block, cudaStream_t stream);
/// dense[offset + j] += block[j] for j < k.
void block_add(const float* block, std::size_t offset, std::size_t k, float* dense, cudaStream_t stream);

// ---- dct_chunks.cu ----
/// DeMo's chunked DCT-II (engine/compress/dct_chunks.hpp): the rows x cols layer `x` in blocks
/// of n1 x n2, each block's coefficients F1^T X F2 row-major, chunk after chunk (row of chunks by
/// row of chunks); the bases are dct_basis(n1) and dct_basis(n2), in device memory.
void dct_chunks_encode(const float* x, std::size_t rows, std::size_t cols, std::size_t n1, std::size_t n2,
                       const float* row_basis, const float* col_basis, float* coefficients, cudaStream_t stream);
/// The inverse: x = F1 C F2^T per block, written into the layer (every element overwritten).
void dct_chunks_decode(const float* coefficients, std::size_t rows, std::size_t cols, std::size_t n1, std::size_t n2,
                       const float* row_basis, const float* col_basis, float* x, cudaStream_t stream);
/// extract_topk() per chunk: chunks x k positions (ascending within each chunk) and their values,
/// the k largest magnitudes of each chunk of `chunk` coefficients, ties to the earlier position.
/// chunk <= 4096 (its keys in 32 KiB of shared memory), 1 <= k <= chunk.
void chunk_topk(const float* coefficients, std::size_t chunks, std::size_t chunk, std::size_t k, std::uint16_t* index,
                float* value, cudaStream_t stream);

}  // namespace laconic::compress::cuda::device
