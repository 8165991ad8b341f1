// Top-k on the device (launch.cuh), exact and with the CPU codec's tie rule. Selection: a radix
// select over the 32-bit magnitude keys (element::magnitude_key), one 8-bit digit a pass from the
// top, finds the k-th largest key T and how many keys equal to T are to be taken (the rest of k
// after those above T). Compaction keeps index order: every tile of kTile elements counts its keys
// above T and equal to T, one block scans the tiles' counts, and each tile writes its selected
// (index, value) pairs at their place; a key equal to T is selected while fewer than the wanted
// ties come before it, so ties go to the lowest indices, as on the CPU. Six passes over the
// gradient in all, no sort. With error feedback the first pass also adds the gradient into the
// residual, and the last takes each sent value off it.
#include <algorithm>

#include "engine/compress/cuda/launch.cuh"
#include "engine/compress/element_math.hpp"

namespace laconic::compress::cuda::device {
namespace {

constexpr unsigned kTile = 4096;             // elements a compaction block counts and writes
constexpr unsigned kHistogramBlocks = 1024;  // grid of the (grid-stride) histogram passes
constexpr unsigned kScanThreads = 1024;
// Words of the workspace's state: the digits chosen so far, the keys equal to them still to be
// taken, and the keys above the threshold.
constexpr unsigned kPrefix = 0, kRemaining = 1, kAbove = 2;

std::size_t tiles_for(std::size_t n) { return (n + kTile - 1) / kTile; }

__global__ void start_kernel(std::uint32_t* histogram, std::uint32_t* state, std::uint32_t k) {
  histogram[threadIdx.x] = 0;
  if (threadIdx.x == 0) {
    state[kPrefix] = 0;
    state[kRemaining] = k;
    state[kAbove] = 0;
  }
}

// Counts, among the keys whose bits above `shift + 8` are the chosen prefix, each value of the
// digit at `shift`. kFeedback: the first pass, over residual + gradient, written back.
template <bool kFeedback>
__global__ void histogram_kernel(const float* values, const float* gradient, float* residual, std::size_t n,
                                 unsigned shift, const std::uint32_t* state, std::uint32_t* histogram) {
  __shared__ std::uint32_t local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t prefix = state[kPrefix];
  for (std::size_t i = thread_item(); i < n; i += gridDim.x * static_cast<std::size_t>(blockDim.x)) {
    float value;
    if constexpr (kFeedback) {
      value = residual[i] + gradient[i];
      residual[i] = value;
    } else {
      value = values[i];
    }
    const std::uint32_t key = element::magnitude_key(value);
    if (shift == 24 || (key >> (shift + 8)) == prefix) {
      // Lanes with the same digit add once: gradients crowd into a few exponents.
      const unsigned digit = (key >> shift) & 0xFFu;
      const unsigned peers = __match_any_sync(__activemask(), digit);
      if ((threadIdx.x & 31u) == static_cast<unsigned>(__ffs(peers) - 1)) atomicAdd(&local[digit], __popc(peers));
    }
  }
  __syncthreads();
  if (local[threadIdx.x] != 0) atomicAdd(&histogram[threadIdx.x], local[threadIdx.x]);
}

// One block of 256 threads: picks the digit that holds the remaining k-th largest key, appends
// it to the prefix, and clears the histogram for the next pass.
__global__ void choose_kernel(std::uint32_t* histogram, std::uint32_t* state) {
  __shared__ std::uint32_t counts[256];
  counts[threadIdx.x] = histogram[threadIdx.x];
  histogram[threadIdx.x] = 0;
  __syncthreads();
  if (threadIdx.x != 0) return;
  const std::uint32_t remaining = state[kRemaining];
  std::uint32_t above = 0;
  unsigned digit = 255;
  while (digit > 0 && above + counts[digit] < remaining) above += counts[digit--];
  state[kPrefix] = (state[kPrefix] << 8) | digit;
  state[kRemaining] = remaining - above;
  state[kAbove] += above;
}

struct Flags {
  bool above, tie;
};

__device__ Flags flags_of(const float* values, std::size_t i, std::size_t n, std::uint32_t threshold) {
  if (i >= n) return {false, false};
  const std::uint32_t key = element::magnitude_key(values[i]);
  return {key > threshold, key == threshold};
}

// Per tile: keys above the threshold and keys equal to it.
__global__ void count_kernel(const float* values, std::size_t n, const std::uint32_t* state,
                             std::uint32_t* tile_counts) {
  const std::uint32_t threshold = state[kPrefix];
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(kTile);
  std::uint32_t above = 0, ties = 0;
  for (std::size_t i = first + threadIdx.x; i < first + kTile && i < n; i += blockDim.x) {
    const Flags f = flags_of(values, i, n, threshold);
    above += f.above;
    ties += f.tie;
  }
  above = __reduce_add_sync(0xFFFFFFFFu, above);
  ties = __reduce_add_sync(0xFFFFFFFFu, ties);
  if ((threadIdx.x & 31u) == 0) {
    atomicAdd(&tile_counts[2 * blockIdx.x], above);
    atomicAdd(&tile_counts[2 * blockIdx.x + 1], ties);
  }
}

// One block: the tiles' counts become exclusive prefix sums, in place (above and ties apart).
__global__ void scan_kernel(std::uint32_t* tile_counts, std::size_t tiles) {
  __shared__ std::uint32_t sums[2][kScanThreads];
  const std::size_t per_thread = (tiles + kScanThreads - 1) / kScanThreads;
  const std::size_t first = threadIdx.x * per_thread, last = first + per_thread < tiles ? first + per_thread : tiles;
  std::uint32_t above = 0, ties = 0;
  for (std::size_t t = first; t < last; ++t) {
    above += tile_counts[2 * t];
    ties += tile_counts[2 * t + 1];
  }
  sums[0][threadIdx.x] = above;
  sums[1][threadIdx.x] = ties;
  __syncthreads();
  for (unsigned step = 1; step < kScanThreads; step *= 2) {  // inclusive scan (Hillis-Steele)
    const std::uint32_t a = threadIdx.x >= step ? sums[0][threadIdx.x - step] : 0;
    const std::uint32_t b = threadIdx.x >= step ? sums[1][threadIdx.x - step] : 0;
    __syncthreads();
    sums[0][threadIdx.x] += a;
    sums[1][threadIdx.x] += b;
    __syncthreads();
  }
  above = threadIdx.x > 0 ? sums[0][threadIdx.x - 1] : 0;
  ties = threadIdx.x > 0 ? sums[1][threadIdx.x - 1] : 0;
  for (std::size_t t = first; t < last; ++t) {
    const std::uint32_t tile_above = tile_counts[2 * t], tile_ties = tile_counts[2 * t + 1];
    tile_counts[2 * t] = above;
    tile_counts[2 * t + 1] = ties;
    above += tile_above;
    ties += tile_ties;
  }
}

// Per tile, in index order, rounds of blockDim.x elements: each selected element's place is the
// selected ones before it, counted by warp ballots, the round's warps and the earlier rounds and
// tiles. kFeedback: values is the residual; each sent value is taken off it.
template <bool kFeedback>
__global__ void write_kernel(float* values, std::size_t n, std::size_t k, const std::uint32_t* state,
                             const std::uint32_t* tile_counts, std::uint8_t* payload) {
  __shared__ std::uint32_t warp_above[32], warp_ties[32];
  const std::uint32_t threshold = state[kPrefix], wanted_ties = state[kRemaining];
  auto* indices = reinterpret_cast<std::uint32_t*>(payload + 8);
  auto* sent = reinterpret_cast<float*>(payload + 8 + 4 * k);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    reinterpret_cast<std::uint32_t*>(payload)[0] = static_cast<std::uint32_t>(n);
    reinterpret_cast<std::uint32_t*>(payload)[1] = static_cast<std::uint32_t>(k);
  }
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const unsigned before_lane = (1u << lane) - 1u;
  std::uint32_t above_before = tile_counts[2 * blockIdx.x], ties_before = tile_counts[2 * blockIdx.x + 1];
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(kTile);
  for (std::size_t round = first; round < first + kTile && round < n; round += blockDim.x) {
    const std::size_t i = round + threadIdx.x;
    const Flags f = flags_of(values, i, n, threshold);
    const unsigned above_mask = __ballot_sync(0xFFFFFFFFu, f.above), tie_mask = __ballot_sync(0xFFFFFFFFu, f.tie);
    if (lane == 0) {
      warp_above[warp] = __popc(above_mask);
      warp_ties[warp] = __popc(tie_mask);
    }
    __syncthreads();
    std::uint32_t above = above_before + __popc(above_mask & before_lane);
    std::uint32_t ties = ties_before + __popc(tie_mask & before_lane);
    for (unsigned w = 0; w < warps; ++w) {
      if (w < warp) {
        above += warp_above[w];
        ties += warp_ties[w];
      }
      above_before += warp_above[w];
      ties_before += warp_ties[w];
    }
    __syncthreads();
    if (f.above || (f.tie && ties < wanted_ties)) {
      const std::uint32_t at = above + (ties < wanted_ties ? ties : wanted_ties);
      const float value = values[i];
      indices[at] = static_cast<std::uint32_t>(i);
      sent[at] = value;
      if constexpr (kFeedback) values[i] = element::residual_after(value, value);
    }
  }
}

__global__ void sparse_add_kernel(const std::uint8_t* payload, std::size_t k, float* dense) {
  const std::size_t j = thread_item();
  if (j >= k) return;
  const auto* indices = reinterpret_cast<const std::uint32_t*>(payload + 8);
  const auto* values = reinterpret_cast<const float*>(payload + 8 + 4 * k);
  dense[indices[j]] += values[j];
}

// The selection and the compaction; kFeedback: `values` is the residual, `gradient` added first.
template <bool kFeedback>
void select(float* values, const float* gradient, std::size_t n, std::size_t k, std::uint8_t* payload,
            const Workspace& workspace, cudaStream_t stream) {
  if (n > workspace.max_elements()) throw std::invalid_argument("topk: the workspace is smaller than the gradient");
  if (k == 0 || k > n) throw std::invalid_argument("topk: k must be in [1, n]");
  std::uint32_t* histogram = workspace.histogram();
  std::uint32_t* state = workspace.state();
  const unsigned blocks = std::min<unsigned>(blocks_for(n), kHistogramBlocks);
  start_kernel<<<1, 256, 0, stream>>>(histogram, state, static_cast<std::uint32_t>(k));
  for (unsigned shift = 24;; shift -= 8) {
    if (kFeedback && shift == 24)
      histogram_kernel<true><<<blocks, 256, 0, stream>>>(nullptr, gradient, values, n, shift, state, histogram);
    else
      histogram_kernel<false><<<blocks, 256, 0, stream>>>(values, nullptr, nullptr, n, shift, state, histogram);
    choose_kernel<<<1, 256, 0, stream>>>(histogram, state);
    if (shift == 0) break;
  }
  const std::size_t tiles = tiles_for(n);
  std::uint32_t* counts = workspace.tile_counts();
  check(cudaMemsetAsync(counts, 0, 2 * tiles * sizeof(std::uint32_t), stream), "cudaMemsetAsync");
  count_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(values, n, state, counts);
  scan_kernel<<<1, kScanThreads, 0, stream>>>(counts, tiles);
  write_kernel<kFeedback><<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(values, n, k, state, counts, payload);
}

}  // namespace

Workspace::Workspace(std::size_t max_elements)
    : max_elements_(max_elements), words_(264 + 2 * std::max<std::size_t>(1, tiles_for(max_elements))) {}

void topk_compress(const float* values, std::size_t n, std::size_t k, std::uint8_t* payload, const Workspace& workspace,
                   cudaStream_t stream) {
  // The plain selection only reads `values`; the feedback variant writes through the same pointer.
  select<false>(const_cast<float*>(values), nullptr, n, k, payload, workspace, stream);
}

void topk_compress_with_feedback(const float* gradient, float* residual, std::size_t n, std::size_t k,
                                 std::uint8_t* payload, const Workspace& workspace, cudaStream_t stream) {
  select<true>(residual, gradient, n, k, payload, workspace, stream);
}

void sparse_pairs_add(const std::uint8_t* payload, std::size_t k, float* dense, cudaStream_t stream) {
  if (k > 0) sparse_add_kernel<<<blocks_for(k), kThreads, 0, stream>>>(payload, k, dense);
}

}  // namespace laconic::compress::cuda::device
