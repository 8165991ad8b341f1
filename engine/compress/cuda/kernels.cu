// The compressors' CUDA kernels (engine/compress/cuda/kernels.hpp): one thread per element, or
// per output byte where elements share a byte, so that no two threads write the same byte and the
// output is the CPU codec's, bit for bit. The per-element math is element_math.hpp's.
#include "engine/compress/cuda/kernels.hpp"

#include <cuda_runtime.h>

#include <stdexcept>

#include "engine/compress/element_math.hpp"

namespace laconic::compress::cuda {
namespace {

constexpr unsigned kThreads = 256;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(status));
}

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

/// A device copy of a host vector (or `count` uninitialised elements), freed with it.
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

__global__ void fp16_encode_kernel(const float* in, std::uint16_t* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = element::fp16_bits(in[i]);
}

__global__ void bf16_encode_kernel(const float* in, std::uint16_t* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = element::bf16_bits(in[i]);
}

__global__ void fp16_decode_add_kernel(const std::uint16_t* bits, float* dense, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dense[i] += element::fp16_value(bits[i]);
}

__global__ void bf16_decode_add_kernel(const std::uint16_t* bits, float* dense, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dense[i] += element::bf16_value(bits[i]);
}

// One thread per output byte: elements 8b .. 8b + 7.
__global__ void negative_bits_kernel(const float* in, std::uint8_t* out, std::size_t n) {
  const std::size_t b = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (8 * b >= n) return;
  unsigned byte = 0;
  for (std::size_t i = 8 * b; i < n && i < 8 * b + 8; ++i)
    byte |= element::negative_bit(in[i]) << element::bit_in_byte(i);
  out[b] = static_cast<std::uint8_t>(byte);
}

// One thread per output byte: elements 4b .. 4b + 3, two bits each, lowest first.
__global__ void terngrad_kernel(const float* g, const float* u, float scale, std::uint8_t* out, std::size_t n) {
  const std::size_t b = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (4 * b >= n) return;
  unsigned byte = 0;
  for (std::size_t i = 4 * b; i < n && i < 4 * b + 4; ++i)
    byte |= element::terngrad_code(g[i], scale, u[i]) << (2 * (i - 4 * b));
  out[b] = static_cast<std::uint8_t>(byte);
}

__global__ void qsgd_kernel(const float* x, const float* u, const float* norms, std::size_t bucket_size, float s,
                            std::uint32_t* codes, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float scale = element::qsgd_scale(norms[i / bucket_size], s);
  codes[i] = scale == 0.0f ? 0u : element::qsgd_code(x[i], u[i], scale, s);
}

// One thread per output byte: the bits [8b, 8b + 8) of the LSB-first stream of `bits`-bit codes.
__global__ void pack_fixed_kernel(const std::uint32_t* codes, unsigned bits, std::uint8_t* out, std::size_t n,
                                  std::size_t bytes) {
  const std::size_t b = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
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
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (j < k) out[j] = values[indices[j]];
}

__global__ void subtract_sent_kernel(float* residual, const float* sent, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) residual[i] = element::residual_after(residual[i], sent[i]);
}

template <class Kernel>
std::vector<std::uint16_t> encode_half(const std::vector<float>& values, Kernel kernel) {
  const DeviceBuffer<float> in(values);
  const DeviceBuffer<std::uint16_t> out(values.size());
  if (!values.empty()) kernel<<<blocks_for(values.size()), kThreads>>>(in.get(), out.get(), values.size());
  return out.to_host();
}

template <class Kernel>
void decode_add_half(const std::vector<std::uint16_t>& bits, std::vector<float>& dense, Kernel kernel) {
  if (bits.size() != dense.size()) throw std::invalid_argument("decode_add: bits and dense differ in length");
  const DeviceBuffer<std::uint16_t> in(bits);
  const DeviceBuffer<float> out(dense);
  if (!bits.empty()) kernel<<<blocks_for(bits.size()), kThreads>>>(in.get(), out.get(), bits.size());
  out.copy_to(dense);
}

}  // namespace

bool device_available(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
    return false;
  }
  if (count == 0) {
    why = "the CUDA runtime sees no device";
    return false;
  }
  return true;
}

std::string device_name() {
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  return properties.name;
}

std::vector<std::uint16_t> fp16_encode(const std::vector<float>& values) {
  return encode_half(values, fp16_encode_kernel);
}
std::vector<std::uint16_t> bf16_encode(const std::vector<float>& values) {
  return encode_half(values, bf16_encode_kernel);
}

void fp16_decode_add(const std::vector<std::uint16_t>& bits, std::vector<float>& dense) {
  decode_add_half(bits, dense, fp16_decode_add_kernel);
}

void bf16_decode_add(const std::vector<std::uint16_t>& bits, std::vector<float>& dense) {
  decode_add_half(bits, dense, bf16_decode_add_kernel);
}

std::vector<std::uint8_t> pack_negative_bits(const std::vector<float>& values) {
  const std::size_t bytes = (values.size() + 7) / 8;
  const DeviceBuffer<float> in(values);
  const DeviceBuffer<std::uint8_t> out(bytes);
  if (bytes > 0) negative_bits_kernel<<<blocks_for(bytes), kThreads>>>(in.get(), out.get(), values.size());
  return out.to_host();
}

std::vector<std::uint8_t> terngrad_codes(const std::vector<float>& gradient, float scale,
                                         const std::vector<float>& uniforms) {
  if (uniforms.size() != gradient.size()) throw std::invalid_argument("terngrad_codes: one uniform per element");
  const std::size_t bytes = (gradient.size() + 3) / 4;
  const DeviceBuffer<float> g(gradient), u(uniforms);
  const DeviceBuffer<std::uint8_t> out(bytes);
  if (bytes > 0) terngrad_kernel<<<blocks_for(bytes), kThreads>>>(g.get(), u.get(), scale, out.get(), gradient.size());
  return out.to_host();
}

std::vector<std::uint32_t> qsgd_codes(const std::vector<float>& values, const std::vector<float>& uniforms,
                                      const std::vector<float>& norms, std::size_t bucket_size, float s) {
  if (uniforms.size() != values.size()) throw std::invalid_argument("qsgd_codes: one uniform per element");
  if (bucket_size == 0 || norms.size() != (values.size() + bucket_size - 1) / bucket_size)
    throw std::invalid_argument("qsgd_codes: one norm per bucket");
  const DeviceBuffer<float> x(values), u(uniforms), bucket_norms(norms);
  const DeviceBuffer<std::uint32_t> out(values.size());
  if (!values.empty())
    qsgd_kernel<<<blocks_for(values.size()), kThreads>>>(x.get(), u.get(), bucket_norms.get(), bucket_size, s,
                                                         out.get(), values.size());
  return out.to_host();
}

std::vector<std::uint8_t> pack_fixed(const std::vector<std::uint32_t>& codes, unsigned bits) {
  if (bits == 0 || bits > 32) throw std::invalid_argument("pack_fixed: bits must be in [1, 32]");
  const std::size_t bytes = (codes.size() * bits + 7) / 8;
  const DeviceBuffer<std::uint32_t> in(codes);
  const DeviceBuffer<std::uint8_t> out(bytes);
  if (bytes > 0) pack_fixed_kernel<<<blocks_for(bytes), kThreads>>>(in.get(), bits, out.get(), codes.size(), bytes);
  return out.to_host();
}

std::vector<float> gather(const std::vector<float>& values, const std::vector<std::uint32_t>& indices) {
  for (std::uint32_t index : indices)
    if (index >= values.size()) throw std::out_of_range("gather: index beyond the values");
  const DeviceBuffer<float> in(values);
  const DeviceBuffer<std::uint32_t> at(indices);
  const DeviceBuffer<float> out(indices.size());
  if (!indices.empty())
    gather_kernel<<<blocks_for(indices.size()), kThreads>>>(in.get(), at.get(), out.get(), indices.size());
  return out.to_host();
}

void subtract_sent(std::vector<float>& residual, const std::vector<float>& sent) {
  if (residual.size() != sent.size()) throw std::invalid_argument("subtract_sent: residual and sent differ in length");
  const DeviceBuffer<float> r(residual), s(sent);
  if (!residual.empty())
    subtract_sent_kernel<<<blocks_for(residual.size()), kThreads>>>(r.get(), s.get(), residual.size());
  r.copy_to(residual);
}

}  // namespace laconic::compress::cuda
