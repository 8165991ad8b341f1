// The elementwise kernels (launch.cuh): one thread per element (eight for fp16 and bf16), or per
// output byte where elements share a byte, so that no two threads write the same byte and the
// output is the CPU codec's, bit for bit. The per-element math is element_math.hpp's.
#include "engine/compress/cuda/launch.cuh"
#include "engine/compress/element_math.hpp"

namespace laconic::compress::cuda::device {
namespace {

// fp16 and bf16: eight elements a thread, as two 16-byte loads of floats and one of halves where
// the eight are whole and aligned, else one at a time.
constexpr unsigned kEight = 8;

template <std::uint16_t (*kEncode)(float)>
__global__ void encode_half_kernel(const float* in, std::uint16_t* out, std::size_t n) {
  const std::size_t first = kEight * thread_item();
  if (first >= n) return;
  if (first + kEight <= n && aligned_to(in + first, 16) && aligned_to(out + first, 16)) {
    const float4 a = reinterpret_cast<const float4*>(in + first)[0];
    const float4 b = reinterpret_cast<const float4*>(in + first)[1];
    auto two = [](float low, float high) { return kEncode(low) | static_cast<unsigned>(kEncode(high)) << 16; };
    *reinterpret_cast<uint4*>(out + first) = uint4{two(a.x, a.y), two(a.z, a.w), two(b.x, b.y), two(b.z, b.w)};
    return;
  }
  for (std::size_t i = first; i < n && i < first + kEight; ++i) out[i] = kEncode(in[i]);
}

template <float (*kDecode)(std::uint16_t)>
__global__ void decode_add_half_kernel(const std::uint16_t* bits, float* dense, std::size_t n) {
  const std::size_t first = kEight * thread_item();
  if (first >= n) return;
  if (first + kEight <= n && aligned_to(bits + first, 16) && aligned_to(dense + first, 16)) {
    const uint4 packed = *reinterpret_cast<const uint4*>(bits + first);
    auto low = [](unsigned two) { return kDecode(static_cast<std::uint16_t>(two & 0xFFFFu)); };
    auto high = [](unsigned two) { return kDecode(static_cast<std::uint16_t>(two >> 16)); };
    float4* d = reinterpret_cast<float4*>(dense + first);
    float4 a = d[0], b = d[1];
    a.x += low(packed.x), a.y += high(packed.x), a.z += low(packed.y), a.w += high(packed.y);
    b.x += low(packed.z), b.y += high(packed.z), b.z += low(packed.w), b.w += high(packed.w);
    d[0] = a;
    d[1] = b;
    return;
  }
  for (std::size_t i = first; i < n && i < first + kEight; ++i) dense[i] += kDecode(bits[i]);
}

// One thread per output byte: elements 8b .. 8b + 7.
__global__ void negative_bits_kernel(const float* in, std::uint8_t* out, std::size_t n) {
  const std::size_t b = thread_item();
  if (8 * b >= n) return;
  unsigned byte = 0;
  for (std::size_t i = 8 * b; i < n && i < 8 * b + 8; ++i)
    byte |= element::negative_bit(in[i]) << element::bit_in_byte(i);
  out[b] = static_cast<std::uint8_t>(byte);
}

__global__ void qsgd_kernel(const float* x, const float* u, const float* norms, std::size_t bucket_size, float s,
                            std::uint32_t* codes, std::size_t n) {
  const std::size_t i = thread_item();
  if (i >= n) return;
  const float scale = element::qsgd_scale(norms[i / bucket_size], s);
  codes[i] = scale == 0.0f ? 0u : element::qsgd_code(x[i], u[i], scale, s);
}

// One thread per output byte: the bits [8b, 8b + 8) of the LSB-first stream of `bits`-bit codes.
__global__ void pack_fixed_kernel(const std::uint32_t* codes, unsigned bits, std::uint8_t* out, std::size_t n,
                                  std::size_t bytes) {
  const std::size_t b = thread_item();
  if (b >= bytes) return;
  const std::size_t first_bit = 8 * b;
  unsigned byte = 0;
  for (std::size_t e = first_bit / bits; e < n && e * bits < first_bit + 8; ++e) {
    const std::size_t at = e * bits;  // the element's first bit in the stream
    // Bits above `bits` are dropped, as pack_bits_to() drops them.
    const std::uint64_t code = codes[e] & ((std::uint64_t{1} << bits) - 1);
    // The element's bits that land in this byte, shifted to their place in it.
    const std::uint64_t placed = at >= first_bit ? code << (at - first_bit) : code >> (first_bit - at);
    byte |= static_cast<unsigned>(placed & 0xFFu);
  }
  out[b] = static_cast<std::uint8_t>(byte);
}

__global__ void gather_kernel(const float* values, const std::uint32_t* indices, float* out, std::size_t k) {
  const std::size_t j = thread_item();
  if (j < k) out[j] = values[indices[j]];
}

__global__ void subtract_sent_kernel(float* residual, const float* sent, std::size_t n) {
  const std::size_t i = thread_item();
  if (i < n) residual[i] = element::residual_after(residual[i], sent[i]);
}

}  // namespace

void fp16_encode(const float* values, std::uint16_t* bits, std::size_t n, cudaStream_t stream) {
  if (n > 0) encode_half_kernel<element::fp16_bits><<<blocks_for((n + 7) / 8), kThreads, 0, stream>>>(values, bits, n);
}
void bf16_encode(const float* values, std::uint16_t* bits, std::size_t n, cudaStream_t stream) {
  if (n > 0) encode_half_kernel<element::bf16_bits><<<blocks_for((n + 7) / 8), kThreads, 0, stream>>>(values, bits, n);
}
void fp16_decode_add(const std::uint16_t* bits, float* dense, std::size_t n, cudaStream_t stream) {
  if (n > 0)
    decode_add_half_kernel<element::fp16_value><<<blocks_for((n + 7) / 8), kThreads, 0, stream>>>(bits, dense, n);
}
void bf16_decode_add(const std::uint16_t* bits, float* dense, std::size_t n, cudaStream_t stream) {
  if (n > 0)
    decode_add_half_kernel<element::bf16_value><<<blocks_for((n + 7) / 8), kThreads, 0, stream>>>(bits, dense, n);
}

void pack_negative_bits(const float* values, std::uint8_t* bits, std::size_t n, cudaStream_t stream) {
  const std::size_t bytes = (n + 7) / 8;
  if (bytes > 0) negative_bits_kernel<<<blocks_for(bytes), kThreads, 0, stream>>>(values, bits, n);
}

void qsgd_codes(const float* values, const float* uniforms, const float* norms, std::size_t bucket_size, float s,
                std::uint32_t* codes, std::size_t n, cudaStream_t stream) {
  if (n > 0) qsgd_kernel<<<blocks_for(n), kThreads, 0, stream>>>(values, uniforms, norms, bucket_size, s, codes, n);
}

void pack_fixed(const std::uint32_t* codes, unsigned bits, std::uint8_t* packed, std::size_t n, cudaStream_t stream) {
  const std::size_t bytes = (n * bits + 7) / 8;
  if (bytes > 0) pack_fixed_kernel<<<blocks_for(bytes), kThreads, 0, stream>>>(codes, bits, packed, n, bytes);
}

void gather(const float* values, const std::uint32_t* indices, float* out, std::size_t k, cudaStream_t stream) {
  if (k > 0) gather_kernel<<<blocks_for(k), kThreads, 0, stream>>>(values, indices, out, k);
}

void subtract_sent(float* residual, const float* sent, std::size_t n, cudaStream_t stream) {
  if (n > 0) subtract_sent_kernel<<<blocks_for(n), kThreads, 0, stream>>>(residual, sent, n);
}

}  // namespace laconic::compress::cuda::device
