#pragma once
// The compressors' CUDA kernels behind a host interface of plain C++17 (no CUDA types: nvcc
// compiles the .cu files as C++17, the newest dialect CMake 3.25 knows for it), so that callers
// and tests compile with the host compiler: each call copies its input to the device, runs the
// kernels (launch.cuh, which bench/cuda/compress_cuda_bench times on device memory), and copies
// the result back. Every kernel computes what the CPU codec computes per element, with the same
// functions (engine/compress/element_math.hpp), and writes its part of the payload in the CPU
// codec's layout. Built only with -DLACONIC_WITH_CUDA=ON.
//
// Not here (issue 34, item 3): QSGD's norms and a whole QSGD payload, random-k's index draws,
// the sign compressors' scales, and the error-feedback fusion beyond Top-k and block-random-k.
#include <cstdint>
#include <string>
#include <vector>

namespace laconic::compress::cuda {

/// True when the CUDA runtime sees a device; otherwise false, with the reason in `why`.
bool device_available(std::string& why);

/// The device's name ("NVIDIA H100 80GB HBM3"), for messages and benchmark tables.
std::string device_name();

/// fp16 / bf16 bits of every value (the fp16 and bf16 compressors' payload bodies).
std::vector<std::uint16_t> fp16_encode(const std::vector<float>& values);
std::vector<std::uint16_t> bf16_encode(const std::vector<float>& values);
/// dense[i] += the float bits[i] holds.
void fp16_decode_add(const std::vector<std::uint16_t>& bits, std::vector<float>& dense);
void bf16_decode_add(const std::vector<std::uint16_t>& bits, std::vector<float>& dense);

/// One bit per value, set for values below zero, element i at byte i / 8, bit i % 8 (the sign
/// compressors' bit field).
std::vector<std::uint8_t> pack_negative_bits(const std::vector<float>& values);

/// TernGrad's 2-bit codes, four to a byte, lowest bits first, for max |g| = scale and one uniform
/// per element (the TernGrad payload after its 8-byte header).
std::vector<std::uint8_t> terngrad_codes(const std::vector<float>& gradient, float scale,
                                         const std::vector<float>& uniforms);

/// A whole TernGrad payload (the CPU codec's layout: n, scale = max |g| or NaN, 2-bit codes),
/// element i's uniform element::uniform_of(element::splitmix64_at(seed, i)): a device stream, so
/// the codes differ from the CPU codec's (xoshiro256**) but follow the same law.
std::vector<std::uint8_t> terngrad_compress(const std::vector<float>& gradient, std::uint64_t seed);
/// dense[i] += the value a TernGrad payload holds for element i (code 3 refused first).
void terngrad_decode_add(const std::vector<std::uint8_t>& payload, std::vector<float>& dense);

/// QSGD's codes (level << 1 | sign) of every element, buckets of `bucket_size` elements with one
/// norm each (scale = s / norm; a zero, infinite or NaN norm gives level 0 to its bucket).
std::vector<std::uint32_t> qsgd_codes(const std::vector<float>& values, const std::vector<float>& uniforms,
                                      const std::vector<float>& norms, std::size_t bucket_size, float s);

/// `codes` packed at `bits` bits each, LSB first (engine/compress/bitpack.hpp's layout).
std::vector<std::uint8_t> pack_fixed(const std::vector<std::uint32_t>& codes, unsigned bits);

/// values[indices[j]] for every j (random-k's kept values).
std::vector<float> gather(const std::vector<float>& values, const std::vector<std::uint32_t>& indices);

/// Error feedback after sending: residual[i] = fl(residual[i] - sent[i]) for every element.
void subtract_sent(std::vector<float>& residual, const std::vector<float>& sent);

/// How the device's Top-k selects: `direct`, a radix select over every element; `prefiltered`,
/// first narrowing to the elements of the k-th largest magnitude's 12-bit bin and above;
/// `automatic` (the default), prefiltered from 2^22 elements when k <= n / 8. Same bytes either way.
enum class TopkPath { automatic, direct, prefiltered };

/// The Top-k payload of `values` for k in [1, n]: TopkCodec's bytes (n, k, the indices of the k
/// largest magnitudes ascending, ties at the k-th to the lowest indices, then their values).
std::vector<std::uint8_t> topk(const std::vector<float>& values, std::size_t k, TopkPath path = TopkPath::automatic);
/// Top-k with error feedback: residual += gradient, the payload of the sum, each sent value taken
/// off the residual (TopkCompressor with error feedback, bit for bit on finite values).
std::vector<std::uint8_t> topk_with_feedback(const std::vector<float>& gradient, std::vector<float>& residual,
                                             std::size_t k, TopkPath path = TopkPath::automatic);
/// dense[index] += value for every pair of a Top-k (sparse pairs) payload.
void sparse_pairs_add(const std::vector<std::uint8_t>& payload, std::vector<float>& dense);

/// Block-random-k with error feedback at the given offset: residual += gradient, returns the
/// block [offset, offset + k) of the sum (the payload), and takes it off the residual.
std::vector<float> block_with_feedback(const std::vector<float>& gradient, std::vector<float>& residual,
                                       std::size_t offset, std::size_t k);
/// dense[offset + j] += block[j] (block-random-k's decoder).
void block_add(const std::vector<float>& block, std::size_t offset, std::vector<float>& dense);

/// The orthonormal DCT-II bases of a chunk's two sides, as compress::dct_basis() gives them
/// (n1 x n1 and n2 x n2, row-major).
struct DctBases {
  std::vector<float> rows, cols;
  std::size_t n1 = 0, n2 = 0;
};
/// DeMo's chunked DCT-II of a rows x cols layer in blocks of n1 x n2 (DctChunks::encode's
/// coefficients, within float rounding: the sums run in another order).
std::vector<float> dct_chunks_encode(const std::vector<float>& x, std::size_t rows, std::size_t cols,
                                     const DctBases& bases);
/// Its inverse (DctChunks::decode).
std::vector<float> dct_chunks_decode(const std::vector<float>& coefficients, std::size_t rows, std::size_t cols,
                                     const DctBases& bases);
/// Each chunk's k coefficients of largest magnitude (extract_topk(): positions ascending within
/// their chunk, ties to the earlier one), finite values, chunk <= 4096.
struct ChunkTopkResult {
  std::vector<std::uint16_t> index;
  std::vector<float> value;
};
ChunkTopkResult chunk_topk(const std::vector<float>& coefficients, std::size_t chunk, std::size_t k);

}  // namespace laconic::compress::cuda
