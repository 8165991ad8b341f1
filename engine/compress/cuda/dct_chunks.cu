// DeMo's chunked DCT and its top-k per chunk on the device (launch.cuh; the CPU's
// engine/compress/dct_chunks.hpp): a chunk per thread block, its block of the layer and the
// transform's intermediate in shared memory.
#include <cuda_runtime.h>

#include "engine/compress/cuda/launch.cuh"

namespace laconic::compress::cuda::device {
namespace {

// The chunk a thread block works on: rows [cy n1, cy n1 + n1), columns [cx n2, cx n2 + n2) of a
// rows x cols layer, chunk index cy (cols / n2) + cx.
struct ChunkAt {
  std::size_t first;  // the chunk's element (0, 0) in the layer
  std::size_t coefficients;  // its first coefficient, chunk after chunk
};

__device__ ChunkAt chunk_at(std::size_t cols, std::size_t n1, std::size_t n2) {
  const std::size_t chunk = blockIdx.x, across = cols / n2;
  return {(chunk / across) * n1 * cols + (chunk % across) * n2, chunk * n1 * n2};
}

// coefficients = F1^T X F2 per chunk: half = X F2 in shared memory, then F1^T half. Basis
// matrices row-major, element (i, k) at i n + k, as dct_basis() lays them out.
__global__ void dct_encode_kernel(const float* x, std::size_t cols, std::size_t n1, std::size_t n2,
                                  const float* row_basis, const float* col_basis, float* coefficients) {
  extern __shared__ float half[];
  const ChunkAt at = chunk_at(cols, n1, n2);
  for (std::size_t e = threadIdx.x; e < n1 * n2; e += blockDim.x) {
    const std::size_t h = e / n2, d = e % n2;
    float sum = 0.0f;
    for (std::size_t w = 0; w < n2; ++w) sum += x[at.first + h * cols + w] * col_basis[w * n2 + d];
    half[e] = sum;
  }
  __syncthreads();
  for (std::size_t e = threadIdx.x; e < n1 * n2; e += blockDim.x) {
    const std::size_t b = e / n2, d = e % n2;
    float sum = 0.0f;
    for (std::size_t h = 0; h < n1; ++h) sum += row_basis[h * n1 + b] * half[h * n2 + d];
    coefficients[at.coefficients + e] = sum;
  }
}

// x = F1 C F2^T per chunk: half = C F2^T in shared memory, then F1 half.
__global__ void dct_decode_kernel(const float* coefficients, std::size_t cols, std::size_t n1, std::size_t n2,
                                  const float* row_basis, const float* col_basis, float* x) {
  extern __shared__ float half[];
  const ChunkAt at = chunk_at(cols, n1, n2);
  for (std::size_t e = threadIdx.x; e < n1 * n2; e += blockDim.x) {
    const std::size_t b = e / n2, w = e % n2;
    float sum = 0.0f;
    for (std::size_t d = 0; d < n2; ++d) sum += coefficients[at.coefficients + b * n2 + d] * col_basis[w * n2 + d];
    half[e] = sum;
  }
  __syncthreads();
  for (std::size_t e = threadIdx.x; e < n1 * n2; e += blockDim.x) {
    const std::size_t h = e / n2, w = e % n2;
    float sum = 0.0f;
    for (std::size_t b = 0; b < n1; ++b) sum += row_basis[h * n1 + b] * half[b * n2 + w];
    x[at.first + h * cols + w] = sum;
  }
}

// Sorts keys[0, n) ascending (n a power of two) by a bitonic network of the block's threads.
__device__ void bitonic_sort(unsigned long long* keys, unsigned n) {
  for (unsigned size = 2; size <= n; size <<= 1)
    for (unsigned stride = size >> 1; stride > 0; stride >>= 1) {
      __syncthreads();
      for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
        const unsigned j = i ^ stride;
        if (j <= i) continue;
        const bool ascending = (i & size) == 0;
        if ((keys[i] > keys[j]) == ascending) {
          const unsigned long long t = keys[i];
          keys[i] = keys[j];
          keys[j] = t;
        }
      }
    }
  __syncthreads();
}

// Each chunk's k largest magnitudes, ties to the earlier position, written ascending by position:
// keys (~|v| bits, position) sorted, the first k re-keyed by position and sorted again.
__global__ void chunk_topk_kernel(const float* coefficients, unsigned chunk, unsigned padded, unsigned k,
                                  std::uint16_t* index, float* value) {
  extern __shared__ unsigned long long keys[];
  const float* c = coefficients + static_cast<std::size_t>(blockIdx.x) * chunk;
  for (unsigned i = threadIdx.x; i < padded; i += blockDim.x) {
    const unsigned magnitude = i < chunk ? __float_as_uint(fabsf(c[i])) : 0u;
    // Padding sorts after every real element; larger magnitudes (as unsigned bits of |v|) first.
    keys[i] = i < chunk ? (static_cast<unsigned long long>(0xFFFFFFFFu - magnitude) << 32) | i : ~0ull;
  }
  bitonic_sort(keys, padded);
  for (unsigned i = threadIdx.x; i < padded; i += blockDim.x)
    keys[i] = i < k ? (keys[i] & 0xFFFFFFFFull) : ~0ull;
  bitonic_sort(keys, padded);
  for (unsigned i = threadIdx.x; i < k; i += blockDim.x) {
    const auto position = static_cast<unsigned>(keys[i]);
    index[static_cast<std::size_t>(blockIdx.x) * k + i] = static_cast<std::uint16_t>(position);
    value[static_cast<std::size_t>(blockIdx.x) * k + i] = c[position];
  }
}

}  // namespace

void dct_chunks_encode(const float* x, std::size_t rows, std::size_t cols, std::size_t n1, std::size_t n2,
                       const float* row_basis, const float* col_basis, float* coefficients, cudaStream_t stream) {
  const auto chunks = static_cast<unsigned>((rows / n1) * (cols / n2));
  if (chunks == 0) return;
  dct_encode_kernel<<<chunks, kThreads, n1 * n2 * sizeof(float), stream>>>(x, cols, n1, n2, row_basis, col_basis,
                                                                          coefficients);
}

void dct_chunks_decode(const float* coefficients, std::size_t rows, std::size_t cols, std::size_t n1, std::size_t n2,
                       const float* row_basis, const float* col_basis, float* x, cudaStream_t stream) {
  const auto chunks = static_cast<unsigned>((rows / n1) * (cols / n2));
  if (chunks == 0) return;
  dct_decode_kernel<<<chunks, kThreads, n1 * n2 * sizeof(float), stream>>>(coefficients, cols, n1, n2, row_basis,
                                                                          col_basis, x);
}

void chunk_topk(const float* coefficients, std::size_t chunks, std::size_t chunk, std::size_t k, std::uint16_t* index,
                float* value, cudaStream_t stream) {
  if (chunks == 0) return;
  unsigned padded = 1;
  while (padded < chunk) padded <<= 1;
  chunk_topk_kernel<<<static_cast<unsigned>(chunks), kThreads, padded * sizeof(unsigned long long), stream>>>(
      coefficients, static_cast<unsigned>(chunk), padded, static_cast<unsigned>(k), index, value);
}

}  // namespace laconic::compress::cuda::device
