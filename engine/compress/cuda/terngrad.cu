// TernGrad on the device (launch.cuh): the scale (max |g|, or NaN when any element is NaN) by a
// reduction, the header, then one thread per code byte drawing each element's uniform from
// element::splitmix64_at(seed, i); and the decoder. The payload is the CPU codec's layout.
#include <algorithm>

#include "engine/compress/cuda/launch.cuh"
#include "engine/compress/element_math.hpp"

namespace laconic::compress::cuda::device {
namespace {

constexpr unsigned kLargest = 0, kAnyNan = 1;  // words of the workspace's state
constexpr unsigned kReduceBlocks = 1024;

__device__ float payload_scale(const std::uint8_t* payload) {
  return element::float_of(reinterpret_cast<const std::uint32_t*>(payload)[1]);
}

// One thread per code byte: elements 4b .. 4b + 3, two bits each, lowest first. `scale` is read
// from the payload's header where `header` is given.
template <bool kCounter>
__global__ void codes_kernel(const float* g, const float* u, std::uint64_t seed, float scale,
                             const std::uint8_t* header, std::uint8_t* out, std::size_t n) {
  const std::size_t b = thread_item();
  if (4 * b >= n) return;
  if (header != nullptr) scale = payload_scale(header);
  const bool send = scale > 0.0f && element::finite(scale);  // else every code is 0, as on the CPU
  unsigned byte = 0;
  for (std::size_t i = 4 * b; send && i < n && i < 4 * b + 4; ++i) {
    const float uniform = kCounter ? element::uniform_of(element::splitmix64_at(seed, i)) : u[i];
    byte |= element::terngrad_code(g[i], scale, uniform) << (2 * (i - 4 * b));
  }
  out[b] = static_cast<std::uint8_t>(byte);
}

// The largest |g| key over non-NaN elements, and whether any element is NaN.
__global__ void largest_kernel(const float* g, std::size_t n, std::uint32_t* state) {
  std::uint32_t largest = 0, nan = 0;
  for (std::size_t i = thread_item(); i < n; i += gridDim.x * static_cast<std::size_t>(blockDim.x)) {
    const std::uint32_t key = element::bits_of(g[i]) & 0x7FFFFFFFu;
    if (key > 0x7F800000u)
      nan = 1;
    else
      largest = key > largest ? key : largest;
  }
  largest = __reduce_max_sync(0xFFFFFFFFu, largest);
  nan = __reduce_or_sync(0xFFFFFFFFu, nan);
  if ((threadIdx.x & 31u) == 0) {
    atomicMax(&state[kLargest], largest);
    if (nan) atomicOr(&state[kAnyNan], 1u);
  }
}

__global__ void header_kernel(const std::uint32_t* state, std::size_t n, std::uint8_t* payload) {
  auto* words = reinterpret_cast<std::uint32_t*>(payload);
  words[0] = static_cast<std::uint32_t>(n);
  words[1] = state[kAnyNan] ? 0x7FC00000u : state[kLargest];  // std::numeric_limits<float>::quiet_NaN()
}

// Sixteen elements a thread (four code bytes), as one 4-byte load of codes and four 16-byte
// read-modify-writes of the dense vector where whole and aligned, else one at a time.
constexpr unsigned kSixteen = 16;

__global__ void decode_add_kernel(const std::uint8_t* payload, float* dense, std::size_t n) {
  const std::size_t first = kSixteen * thread_item();
  if (first >= n) return;
  const float scale = payload_scale(payload);
  const std::uint8_t* codes = payload + 8 + first / 4;
  if (first + kSixteen <= n && aligned_to(dense + first, 16) && aligned_to(codes, 4)) {
    const unsigned four = *reinterpret_cast<const unsigned*>(codes);
    float4* d = reinterpret_cast<float4*>(dense + first);
    for (unsigned q = 0; q < 4; ++q) {
      const unsigned byte = four >> (8 * q);
      float4 v = d[q];
      v.x += element::terngrad_value(byte & 3u, scale);
      v.y += element::terngrad_value((byte >> 2) & 3u, scale);
      v.z += element::terngrad_value((byte >> 4) & 3u, scale);
      v.w += element::terngrad_value((byte >> 6) & 3u, scale);
      d[q] = v;
    }
    return;
  }
  for (std::size_t i = first; i < n && i < first + kSixteen; ++i)
    dense[i] += element::terngrad_value((payload[8 + i / 4] >> (2 * (i % 4))) & 3u, scale);
}

}  // namespace

void terngrad_codes(const float* gradient, const float* uniforms, float scale, std::uint8_t* codes, std::size_t n,
                    cudaStream_t stream) {
  const std::size_t bytes = (n + 3) / 4;
  if (bytes > 0)
    codes_kernel<false><<<blocks_for(bytes), kThreads, 0, stream>>>(gradient, uniforms, 0, scale, nullptr, codes, n);
}

void terngrad_compress(const float* gradient, std::size_t n, std::uint64_t seed, std::uint8_t* payload,
                       const Workspace& workspace, cudaStream_t stream) {
  std::uint32_t* state = workspace.state();
  check(cudaMemsetAsync(state, 0, 2 * sizeof(std::uint32_t), stream), "cudaMemsetAsync");
  const unsigned blocks = std::min<unsigned>(blocks_for(n), kReduceBlocks);
  if (n > 0) largest_kernel<<<blocks, kThreads, 0, stream>>>(gradient, n, state);
  header_kernel<<<1, 1, 0, stream>>>(state, n, payload);
  const std::size_t bytes = (n + 3) / 4;
  if (bytes > 0)
    codes_kernel<true><<<blocks_for(bytes), kThreads, 0, stream>>>(gradient, nullptr, seed, 0, payload, payload + 8, n);
}

void terngrad_decode_add(const std::uint8_t* payload, float* dense, std::size_t n, cudaStream_t stream) {
  if (n > 0) decode_add_kernel<<<blocks_for((n + kSixteen - 1) / kSixteen), kThreads, 0, stream>>>(payload, dense, n);
}

}  // namespace laconic::compress::cuda::device
