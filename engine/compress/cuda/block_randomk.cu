// Block-random-k on the device (launch.cuh): the block is one contiguous copy; with error
// feedback one pass adds the gradient into the residual, writes the block of the sum and takes it
// off the residual (BlockRandomkCompressor with error feedback, bit for bit on finite values). The
// offset is the CPU codec's (one draw from Rng(derive_seed(run_seed, step))), given by the caller.
#include "engine/compress/cuda/launch.cuh"
#include "engine/compress/element_math.hpp"

namespace laconic::compress::cuda::device {
namespace {

__global__ void with_feedback_kernel(const float* gradient, float* residual, std::size_t n, std::size_t offset,
                                     std::size_t k, float* block) {
  const std::size_t i = thread_item();
  if (i >= n) return;
  const float corrected = residual[i] + gradient[i];
  if (i >= offset && i - offset < k) {
    block[i - offset] = corrected;
    residual[i] = element::residual_after(corrected, corrected);
  } else {
    residual[i] = corrected;
  }
}

__global__ void add_kernel(const float* block, std::size_t k, float* dense) {
  const std::size_t j = thread_item();
  if (j < k) dense[j] += block[j];
}

}  // namespace

void block_copy(const float* values, std::size_t offset, std::size_t k, float* block, cudaStream_t stream) {
  if (k > 0)
    check(cudaMemcpyAsync(block, values + offset, k * sizeof(float), cudaMemcpyDeviceToDevice, stream), "block copy");
}

void block_with_feedback(const float* gradient, float* residual, std::size_t n, std::size_t offset, std::size_t k,
                         float* block, cudaStream_t stream) {
  if (n > 0) with_feedback_kernel<<<blocks_for(n), kThreads, 0, stream>>>(gradient, residual, n, offset, k, block);
}

void block_add(const float* block, std::size_t offset, std::size_t k, float* dense, cudaStream_t stream) {
  if (k > 0) add_kernel<<<blocks_for(k), kThreads, 0, stream>>>(block, k, dense + offset);
}

}  // namespace laconic::compress::cuda::device
