#pragma once
// What the kernels' .cu files share: error checks, grid sizes, the thread's element, and a
// device buffer that frees itself. CUDA code only (nvcc).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace laconic::compress::cuda {

/// Threads per block of the elementwise kernels.
constexpr unsigned kThreads = 256;

/// Throws with the CUDA error's text when `status` is not success.
inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(status));
}

/// Blocks of `per_block` threads that cover `n` items, one each.
inline unsigned blocks_for(std::size_t n, unsigned per_block = kThreads) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

/// The calling thread's item in a one-dimensional grid.
__device__ inline std::size_t thread_item() { return blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; }

/// True when `p` lies on a multiple of `bytes` (a vector load's alignment).
__device__ inline bool aligned_to(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

/// A device array of `count` T (or a copy of a host vector), freed with the object.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) check(cudaMalloc(&data_, count_ * sizeof(T)), "cudaMalloc");
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    if (count_ > 0) check(cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), "copy in");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  /// Copies the buffer into `host` (of the same length) after the kernels before it finish,
  /// first throwing any error a launch left.
  void copy_to(std::vector<T>& host) const {
    check(cudaGetLastError(), "kernel launch");
    if (count_ > 0) check(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "copy out");
  }
  std::vector<T> to_host() const {
    std::vector<T> out(count_);
    copy_to(out);
    return out;
  }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

}  // namespace laconic::compress::cuda
