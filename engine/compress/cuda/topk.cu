// Top-k on the device (launch.cuh), exact and with the CPU codec's tie rule. Selection: a radix
// select over the 32-bit magnitude keys (element::magnitude_key), one 8-bit digit a pass from the
// top, finds the k-th largest key T and how many keys equal to T are to be taken (the rest of k
// after those above T). Compaction keeps index order: every tile of kTile elements counts what it
// keeps, one block scans the tiles' counts, and each tile writes its elements at their place; a
// key equal to T is kept while fewer than the wanted ties come before it, so ties go to the lowest
// indices, as on the CPU. No sort.
//
// On long gradients a prefilter first narrows the selection to a few k candidates: a histogram of
// the keys' top 12 bits (a sign, the exponent, three mantissa bits) finds the bin that holds the
// k-th largest key, and one compaction copies every element of that bin or above (indices and
// values, in index order); the radix select and the final compaction then run over the
// candidates. Three passes over the gradient instead of six. With error feedback the first pass
// also adds the gradient into the residual, and the last takes each sent value off it.
#include <algorithm>

#include "engine/compress/cuda/launch.cuh"
#include "engine/compress/element_math.hpp"

namespace laconic::compress::cuda::device {
namespace {

constexpr unsigned kTile = 4096;        // elements a compaction block counts and writes
constexpr unsigned kGridBlocks = 1024;  // grid of the grid-stride passes
constexpr unsigned kScanThreads = 1024;
constexpr unsigned kCoarseShift = 20, kCoarseBins = 1u << 12;  // the prefilter's 12-bit digit
// The prefilter from 2^22 elements and k <= n / 8: on an H100 a direct selection of 1% took
// 0.076 ms at 10^6 elements against the prefilter's 0.098 ms (its extra launches), and 0.168 ms
// against 0.141 ms at 10^7 (docs/benchmarks.md); above n / 8 the candidates are most of the
// gradient anyway.
constexpr std::size_t kPrefilterMinElements = std::size_t{1} << 22, kPrefilterMaxShare = 8;
// Words of the workspace's state: the digits chosen so far (at the end the k-th largest key), the
// keys equal to them still to be taken, the elements the selection runs over (n, or the
// candidates), and the prefilter's bin.
constexpr unsigned kPrefix = 0, kRemaining = 1, kCount = 2, kCut = 3;
constexpr unsigned kWarps = kThreads / 32;
// The compactions' rounds: four consecutive elements a thread.
constexpr unsigned kPerThread = 4, kRound = kThreads * kPerThread;
static_assert(kTile % kRound == 0, "a tile is whole rounds");

__host__ __device__ std::size_t tiles_for(std::size_t n) { return (n + kTile - 1) / kTile; }

/// The elements a pass runs over: `n`, or the count the state holds when `count` is given.
__device__ std::size_t elements(std::size_t n, const std::uint32_t* count) { return count ? *count : n; }

__global__ void start_kernel(std::uint32_t* histogram, std::uint32_t* state, std::uint32_t k, std::uint32_t n) {
  for (unsigned b = threadIdx.x; b < kCoarseBins; b += blockDim.x) histogram[b] = 0;
  if (threadIdx.x == 0) {
    state[kPrefix] = 0;
    state[kRemaining] = k;
    state[kCount] = n;
  }
}

// The radix select starts over on the candidates.
__global__ void restart_kernel(std::uint32_t* state, std::uint32_t k) {
  state[kPrefix] = 0;
  state[kRemaining] = k;
}

/// One element's value; kFeedback: residual + gradient, written back (the first pass).
template <bool kFeedback>
__device__ float corrected(const float* values, const float* gradient, float* residual, std::size_t i) {
  if constexpr (kFeedback) {
    const float value = residual[i] + gradient[i];
    residual[i] = value;
    return value;
  } else {
    return values[i];
  }
}

/// Adds one to `bins[digit]` for each lane: lanes with the same digit add once (an 8-bit digit of
/// a gradient's magnitudes crowds into a few values). The prefilter's 12-bit digits spread over
/// enough bins that plain shared atomics are faster there.
__device__ void count_digit(std::uint32_t* bins, unsigned digit) {
  const unsigned peers = __match_any_sync(__activemask(), digit);
  if ((threadIdx.x & 31u) == static_cast<unsigned>(__ffs(peers) - 1)) atomicAdd(&bins[digit], __popc(peers));
}

// The prefilter's histogram of the keys' top 12 bits over all n elements.
template <bool kFeedback>
__global__ void coarse_histogram_kernel(const float* values, const float* gradient, float* residual, std::size_t n,
                                        std::uint32_t* histogram) {
  __shared__ std::uint32_t local[kCoarseBins];
  for (unsigned b = threadIdx.x; b < kCoarseBins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (std::size_t i = thread_item(); i < n; i += gridDim.x * static_cast<std::size_t>(blockDim.x))
    atomicAdd(&local[element::magnitude_key(corrected<kFeedback>(values, gradient, residual, i)) >> kCoarseShift], 1u);
  __syncthreads();
  for (unsigned b = threadIdx.x; b < kCoarseBins; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&histogram[b], local[b]);
}

// One block of kScanThreads, four bins a thread: the bin `cut` that holds the k-th largest key;
// every key in it or above is a candidate (state kCount). Clears the histogram.
__global__ void coarse_choose_kernel(std::uint32_t* histogram, std::uint32_t* state) {
  __shared__ std::uint32_t above_from[kScanThreads];  // keys in this thread's bins and above
  const unsigned t = threadIdx.x;
  std::uint32_t bins[4], own = 0;
  for (unsigned j = 0; j < 4; ++j) {
    bins[j] = histogram[4 * t + j];
    histogram[4 * t + j] = 0;
    own += bins[j];
  }
  above_from[t] = own;
  __syncthreads();
  for (unsigned step = 1; step < kScanThreads; step *= 2) {  // suffix sums (Hillis-Steele)
    const std::uint32_t v = t + step < kScanThreads ? above_from[t + step] : 0;
    __syncthreads();
    above_from[t] += v;
    __syncthreads();
  }
  const std::uint32_t k = state[kRemaining];
  std::uint32_t above = t + 1 < kScanThreads ? above_from[t + 1] : 0;
  if (!(above < k && k <= above + own)) return;  // exactly one thread holds the k-th largest
  unsigned j = 3;
  while (above + bins[j] < k) above += bins[j--];
  state[kCut] = 4 * t + j;
  state[kCount] = above + bins[j];
}

// Counts, among the keys whose bits above `shift + 8` are the chosen prefix, each value of the
// digit at `shift`.
template <bool kFeedback>
__global__ void histogram_kernel(const float* values, const float* gradient, float* residual, std::size_t n,
                                 const std::uint32_t* count, unsigned shift, const std::uint32_t* state,
                                 std::uint32_t* histogram) {
  __shared__ std::uint32_t local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t prefix = state[kPrefix];
  n = elements(n, count);
  for (std::size_t i = thread_item(); i < n; i += gridDim.x * static_cast<std::size_t>(blockDim.x)) {
    const std::uint32_t key = element::magnitude_key(corrected<kFeedback>(values, gradient, residual, i));
    if (shift == 24 || (key >> (shift + 8)) == prefix) count_digit(local, (key >> shift) & 0xFFu);
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
}

/// What a compaction keeps of an element: `above` is kept, a `tie` while ties are wanted. For the
/// prefilter (kCandidates): every key in the cut's bin or above, no ties.
struct Flags {
  bool above, tie;
};

/// The threshold a compaction compares with: the cut's bin (kCandidates), else the k-th largest key.
template <bool kCandidates>
__device__ std::uint32_t threshold_of(const std::uint32_t* state) {
  return kCandidates ? state[kCut] : state[kPrefix];
}

template <bool kCandidates>
__device__ Flags flags_of(float value, std::uint32_t threshold) {
  const std::uint32_t key = element::magnitude_key(value);
  if constexpr (kCandidates) return {(key >> kCoarseShift) >= threshold, false};
  return {key > threshold, key == threshold};
}

/// The flags of elements first .. first + 3 (none past n), four loads in flight, one 16-byte
/// load where the four are aligned.
template <bool kCandidates>
__device__ void flags_of_four(const float* values, std::size_t first, std::size_t n, std::uint32_t threshold,
                              Flags (&f)[kPerThread]) {
  float v[kPerThread];
  if (first + kPerThread <= n && aligned_to(values + first, 16)) {
    const float4 four = *reinterpret_cast<const float4*>(values + first);
    v[0] = four.x, v[1] = four.y, v[2] = four.z, v[3] = four.w;
  } else {
    for (unsigned j = 0; j < kPerThread; ++j) v[j] = first + j < n ? values[first + j] : 0.0f;
  }
  for (unsigned j = 0; j < kPerThread; ++j)
    f[j] = first + j < n ? flags_of<kCandidates>(v[j], threshold) : Flags{false, false};
}

// Per tile: the keys kept outright and the ties. Blocks stride over the tiles.
template <bool kCandidates>
__global__ void count_kernel(const float* values, std::size_t n, const std::uint32_t* count, const std::uint32_t* state,
                             std::uint32_t* tile_counts) {
  n = elements(n, count);
  const std::uint32_t threshold = threshold_of<kCandidates>(state);
  for (std::size_t tile = blockIdx.x; tile < tiles_for(n); tile += gridDim.x) {
    std::uint32_t above = 0, ties = 0;
    for (std::size_t round = tile * kTile; round < (tile + 1) * kTile && round < n; round += kRound) {
      Flags f[kPerThread];
      flags_of_four<kCandidates>(values, round + kPerThread * threadIdx.x, n, threshold, f);
      for (const Flags& one : f) {
        above += one.above;
        ties += one.tie;
      }
    }
    above = __reduce_add_sync(0xFFFFFFFFu, above);
    ties = __reduce_add_sync(0xFFFFFFFFu, ties);
    if ((threadIdx.x & 31u) == 0) {
      atomicAdd(&tile_counts[2 * tile], above);
      atomicAdd(&tile_counts[2 * tile + 1], ties);
    }
  }
}

// One block: the tiles' counts become exclusive prefix sums, in place (above and ties apart).
__global__ void scan_kernel(std::uint32_t* tile_counts, std::size_t n, const std::uint32_t* count) {
  __shared__ std::uint32_t sums[2][kScanThreads];
  const std::size_t tiles = tiles_for(elements(n, count));
  const std::size_t per_thread = (tiles + kScanThreads - 1) / kScanThreads;
  const std::size_t first = threadIdx.x * per_thread;
  const std::size_t last = first + per_thread < tiles ? first + per_thread : tiles;
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

/// Where a compaction writes: the kept elements' indices (`index_of[i]` where the values are
/// candidates, else i) and values; `residual`, with error feedback, loses each sent value.
struct Output {
  std::uint32_t* indices;
  float* values;
  const std::uint32_t* index_of;
  float* residual;
};

/// A round's kept elements before this thread's four, kept outright (low 16 bits) and ties (high
/// 16 bits), and the round's totals (a round holds kRound < 2^16 elements): a warp scan by
/// shuffles, then the warps' sums in shared memory.
struct RoundCounts {
  std::uint32_t before, total;
};

__device__ RoundCounts count_round(std::uint32_t own, std::uint32_t* warp_sums) {
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  std::uint32_t inclusive = own;
  for (unsigned d = 1; d < 32; d *= 2) {
    const std::uint32_t v = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
    if (lane >= d) inclusive += v;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  RoundCounts c{inclusive - own, 0};
  for (unsigned w = 0; w < kWarps; ++w) {
    if (w < warp) c.before += warp_sums[w];
    c.total += warp_sums[w];
  }
  __syncthreads();
  return c;
}

// Per tile, in index order, rounds of kRound elements, kPerThread consecutive ones a thread: each
// kept element's place is the kept ones before it in the earlier tiles, rounds, threads and its
// own earlier elements.
template <bool kCandidates, bool kFeedback>
__global__ void write_kernel(const float* values, std::size_t n, const std::uint32_t* count, const std::uint32_t* state,
                             const std::uint32_t* tile_counts, Output out) {
  __shared__ std::uint32_t warp_sums[kWarps];
  n = elements(n, count);
  const std::uint32_t threshold = threshold_of<kCandidates>(state), wanted_ties = state[kRemaining];
  for (std::size_t tile = blockIdx.x; tile < tiles_for(n); tile += gridDim.x) {
    std::uint32_t above_before = tile_counts[2 * tile], ties_before = tile_counts[2 * tile + 1];
    for (std::size_t round = tile * kTile; round < (tile + 1) * kTile && round < n; round += kRound) {
      const std::size_t first = round + kPerThread * threadIdx.x;
      Flags f[kPerThread];
      flags_of_four<kCandidates>(values, first, n, threshold, f);
      std::uint32_t own = 0;
      for (const Flags& one : f) own += (one.above ? 1u : 0u) + (one.tie ? 1u << 16 : 0u);
      const RoundCounts c = count_round(own, warp_sums);
      std::uint32_t above = above_before + (c.before & 0xFFFFu), ties = ties_before + (c.before >> 16);
      above_before += c.total & 0xFFFFu;
      ties_before += c.total >> 16;
      for (unsigned j = 0; j < kPerThread; ++j) {
        if (f[j].above || (f[j].tie && ties < wanted_ties)) {
          const std::size_t i = first + j;
          const std::uint32_t at = above + (ties < wanted_ties ? ties : wanted_ties);
          const std::uint32_t index = out.index_of ? out.index_of[i] : static_cast<std::uint32_t>(i);
          const float value = values[i];
          out.indices[at] = index;
          out.values[at] = value;
          if constexpr (kFeedback) out.residual[index] = element::residual_after(value, value);
        }
        above += f[j].above;
        ties += f[j].tie;
      }
    }
  }
}

__global__ void header_kernel(std::uint8_t* payload, std::uint32_t n, std::uint32_t k) {
  reinterpret_cast<std::uint32_t*>(payload)[0] = n;
  reinterpret_cast<std::uint32_t*>(payload)[1] = k;
}

__global__ void sparse_add_kernel(const std::uint8_t* payload, std::size_t k, float* dense) {
  const std::size_t j = thread_item();
  if (j >= k) return;
  const auto* indices = reinterpret_cast<const std::uint32_t*>(payload + 8);
  const auto* values = reinterpret_cast<const float*>(payload + 8 + 4 * k);
  dense[indices[j]] += values[j];
}

/// A compaction of `values` (n of them, or the state's count): counts, scan, write.
template <bool kCandidates, bool kFeedback>
void compact(const float* values, std::size_t n, const std::uint32_t* count, const Output& out,
             const Workspace& workspace, cudaStream_t stream) {
  const std::size_t tiles = tiles_for(n);  // at most: the state's count is never above n
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(tiles, 4 * kGridBlocks));
  std::uint32_t* counts = workspace.tile_counts();
  check(cudaMemsetAsync(counts, 0, 2 * tiles * sizeof(std::uint32_t), stream), "cudaMemsetAsync");
  count_kernel<kCandidates><<<grid, kThreads, 0, stream>>>(values, n, count, workspace.state(), counts);
  scan_kernel<<<1, kScanThreads, 0, stream>>>(counts, n, count);
  write_kernel<kCandidates, kFeedback><<<grid, kThreads, 0, stream>>>(values, n, count, workspace.state(), counts, out);
}

/// The radix select's four passes over `values` (n, or the state's count); kFeedback: the first
/// also adds the gradient into `values`, the residual.
template <bool kFeedback>
void radix_select(float* values, const float* gradient, std::size_t n, const std::uint32_t* count,
                  const Workspace& workspace, cudaStream_t stream) {
  const unsigned grid = std::min<unsigned>(blocks_for(n), kGridBlocks);
  std::uint32_t* histogram = workspace.histogram();
  std::uint32_t* state = workspace.state();
  for (unsigned shift = 24;; shift -= 8) {
    if (kFeedback && shift == 24)
      histogram_kernel<true><<<grid, 256, 0, stream>>>(nullptr, gradient, values, n, count, shift, state, histogram);
    else
      histogram_kernel<false><<<grid, 256, 0, stream>>>(values, nullptr, nullptr, n, count, shift, state, histogram);
    choose_kernel<<<1, 256, 0, stream>>>(histogram, state);
    if (shift == 0) break;
  }
}

// The selection and the compaction; kFeedback: `values` is the residual, `gradient` added first.
template <bool kFeedback>
void select(float* values, const float* gradient, std::size_t n, std::size_t k, std::uint8_t* payload,
            const Workspace& workspace, TopkPath path, cudaStream_t stream) {
  if (n > workspace.max_elements()) throw std::invalid_argument("topk: the workspace is smaller than the gradient");
  if (k == 0 || k > n) throw std::invalid_argument("topk: k must be in [1, n]");
  std::uint32_t* state = workspace.state();
  const auto n32 = static_cast<std::uint32_t>(n), k32 = static_cast<std::uint32_t>(k);
  start_kernel<<<1, kScanThreads, 0, stream>>>(workspace.histogram(), state, k32, n32);
  header_kernel<<<1, 1, 0, stream>>>(payload, n32, k32);
  const Output to_payload{reinterpret_cast<std::uint32_t*>(payload + 8), reinterpret_cast<float*>(payload + 8 + 4 * k),
                          nullptr, values};
  if (path == TopkPath::automatic)
    path = n >= kPrefilterMinElements && k <= n / kPrefilterMaxShare ? TopkPath::prefiltered : TopkPath::direct;
  if (path == TopkPath::direct) {
    radix_select<kFeedback>(values, gradient, n, nullptr, workspace, stream);
    compact<false, kFeedback>(values, n, nullptr, to_payload, workspace, stream);
    return;
  }
  const unsigned grid = std::min<unsigned>(blocks_for(n), kGridBlocks);
  coarse_histogram_kernel<kFeedback><<<grid, kThreads, 0, stream>>>(values, gradient, values, n, workspace.histogram());
  coarse_choose_kernel<<<1, kScanThreads, 0, stream>>>(workspace.histogram(), state);
  const Output to_candidates{workspace.candidates(), workspace.candidate_values(), nullptr, nullptr};
  compact<true, false>(values, n, nullptr, to_candidates, workspace, stream);
  restart_kernel<<<1, 1, 0, stream>>>(state, k32);
  const std::uint32_t* count = state + kCount;
  radix_select<false>(workspace.candidate_values(), nullptr, n, count, workspace, stream);
  compact<false, kFeedback>(workspace.candidate_values(), n, count,
                            Output{to_payload.indices, to_payload.values, workspace.candidates(), values}, workspace,
                            stream);
}

}  // namespace

Workspace::Workspace(std::size_t max_elements)
    : max_elements_(max_elements),
      words_(kCoarseBins + 8 + 2 * std::max<std::size_t>(1, tiles_for(max_elements))),
      candidates_(max_elements),
      candidate_values_(max_elements) {}

std::uint32_t* Workspace::histogram() const { return words_.get(); }
std::uint32_t* Workspace::state() const { return words_.get() + kCoarseBins; }
std::uint32_t* Workspace::tile_counts() const { return words_.get() + kCoarseBins + 8; }

void topk_compress(const float* values, std::size_t n, std::size_t k, std::uint8_t* payload, const Workspace& workspace,
                   cudaStream_t stream, TopkPath path) {
  // The plain selection only reads `values`; the feedback variant writes through the same pointer.
  select<false>(const_cast<float*>(values), nullptr, n, k, payload, workspace, path, stream);
}

void topk_compress_with_feedback(const float* gradient, float* residual, std::size_t n, std::size_t k,
                                 std::uint8_t* payload, const Workspace& workspace, cudaStream_t stream,
                                 TopkPath path) {
  select<true>(residual, gradient, n, k, payload, workspace, path, stream);
}

void sparse_pairs_add(const std::uint8_t* payload, std::size_t k, float* dense, cudaStream_t stream) {
  if (k > 0) sparse_add_kernel<<<blocks_for(k), kThreads, 0, stream>>>(payload, k, dense);
}

}  // namespace laconic::compress::cuda::device
