// The host API of the compressors' kernels (kernels.hpp): each call copies its input to the
// device, runs the kernels of launch.cuh on the default stream, and copies the result back.
#include "engine/compress/cuda/kernels.hpp"

#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>

#include "engine/compress/cuda/launch.cuh"

namespace laconic::compress::cuda {

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
  const DeviceBuffer<float> in(values);
  const DeviceBuffer<std::uint16_t> out(values.size());
  device::fp16_encode(in.get(), out.get(), values.size(), nullptr);
  return out.to_host();
}

std::vector<std::uint16_t> bf16_encode(const std::vector<float>& values) {
  const DeviceBuffer<float> in(values);
  const DeviceBuffer<std::uint16_t> out(values.size());
  device::bf16_encode(in.get(), out.get(), values.size(), nullptr);
  return out.to_host();
}

void fp16_decode_add(const std::vector<std::uint16_t>& bits, std::vector<float>& dense) {
  if (bits.size() != dense.size()) throw std::invalid_argument("fp16_decode_add: bits and dense differ in length");
  const DeviceBuffer<std::uint16_t> in(bits);
  const DeviceBuffer<float> out(dense);
  device::fp16_decode_add(in.get(), out.get(), bits.size(), nullptr);
  out.copy_to(dense);
}

void bf16_decode_add(const std::vector<std::uint16_t>& bits, std::vector<float>& dense) {
  if (bits.size() != dense.size()) throw std::invalid_argument("bf16_decode_add: bits and dense differ in length");
  const DeviceBuffer<std::uint16_t> in(bits);
  const DeviceBuffer<float> out(dense);
  device::bf16_decode_add(in.get(), out.get(), bits.size(), nullptr);
  out.copy_to(dense);
}

std::vector<std::uint8_t> pack_negative_bits(const std::vector<float>& values) {
  const DeviceBuffer<float> in(values);
  const DeviceBuffer<std::uint8_t> out((values.size() + 7) / 8);
  device::pack_negative_bits(in.get(), out.get(), values.size(), nullptr);
  return out.to_host();
}

std::vector<std::uint8_t> terngrad_codes(const std::vector<float>& gradient, float scale,
                                         const std::vector<float>& uniforms) {
  if (uniforms.size() != gradient.size()) throw std::invalid_argument("terngrad_codes: one uniform per element");
  const DeviceBuffer<float> g(gradient), u(uniforms);
  const DeviceBuffer<std::uint8_t> out((gradient.size() + 3) / 4);
  device::terngrad_codes(g.get(), u.get(), scale, out.get(), gradient.size(), nullptr);
  return out.to_host();
}

std::vector<std::uint8_t> terngrad_compress(const std::vector<float>& gradient, std::uint64_t seed) {
  const DeviceBuffer<float> g(gradient);
  const DeviceBuffer<std::uint8_t> payload(8 + (gradient.size() + 3) / 4);
  const device::Workspace workspace(gradient.size());
  device::terngrad_compress(g.get(), gradient.size(), seed, payload.get(), workspace, nullptr);
  return payload.to_host();
}

void terngrad_decode_add(const std::vector<std::uint8_t>& payload, std::vector<float>& dense) {
  if (payload.size() != 8 + (dense.size() + 3) / 4)
    throw std::invalid_argument("terngrad_decode_add: the payload is not one for dense's length");
  for (std::size_t i = 8; i < payload.size(); ++i)
    if (payload[i] & (payload[i] >> 1) & 0x55u) throw std::invalid_argument("terngrad_decode_add: invalid code 3");
  const DeviceBuffer<std::uint8_t> in(payload);
  const DeviceBuffer<float> out(dense);
  device::terngrad_decode_add(in.get(), out.get(), dense.size(), nullptr);
  out.copy_to(dense);
}

std::vector<std::uint32_t> qsgd_codes(const std::vector<float>& values, const std::vector<float>& uniforms,
                                      const std::vector<float>& norms, std::size_t bucket_size, float s) {
  if (uniforms.size() != values.size()) throw std::invalid_argument("qsgd_codes: one uniform per element");
  if (bucket_size == 0 || norms.size() != (values.size() + bucket_size - 1) / bucket_size)
    throw std::invalid_argument("qsgd_codes: one norm per bucket");
  const DeviceBuffer<float> x(values), u(uniforms), bucket_norms(norms);
  const DeviceBuffer<std::uint32_t> out(values.size());
  device::qsgd_codes(x.get(), u.get(), bucket_norms.get(), bucket_size, s, out.get(), values.size(), nullptr);
  return out.to_host();
}

std::vector<std::uint8_t> pack_fixed(const std::vector<std::uint32_t>& codes, unsigned bits) {
  if (bits == 0 || bits > 32) throw std::invalid_argument("pack_fixed: bits must be in [1, 32]");
  const DeviceBuffer<std::uint32_t> in(codes);
  const DeviceBuffer<std::uint8_t> out((codes.size() * bits + 7) / 8);
  device::pack_fixed(in.get(), bits, out.get(), codes.size(), nullptr);
  return out.to_host();
}

std::vector<float> gather(const std::vector<float>& values, const std::vector<std::uint32_t>& indices) {
  for (std::uint32_t index : indices)
    if (index >= values.size()) throw std::out_of_range("gather: index beyond the values");
  const DeviceBuffer<float> in(values);
  const DeviceBuffer<std::uint32_t> at(indices);
  const DeviceBuffer<float> out(indices.size());
  device::gather(in.get(), at.get(), out.get(), indices.size(), nullptr);
  return out.to_host();
}

void subtract_sent(std::vector<float>& residual, const std::vector<float>& sent) {
  if (residual.size() != sent.size()) throw std::invalid_argument("subtract_sent: residual and sent differ in length");
  const DeviceBuffer<float> r(residual), s(sent);
  device::subtract_sent(r.get(), s.get(), residual.size(), nullptr);
  r.copy_to(residual);
}

std::vector<std::uint8_t> topk(const std::vector<float>& values, std::size_t k, TopkPath path) {
  const DeviceBuffer<float> in(values);
  const DeviceBuffer<std::uint8_t> payload(8 + 8 * k);
  const device::Workspace workspace(values.size());
  device::topk_compress(in.get(), values.size(), k, payload.get(), workspace, nullptr, path);
  return payload.to_host();
}

std::vector<std::uint8_t> topk_with_feedback(const std::vector<float>& gradient, std::vector<float>& residual,
                                             std::size_t k, TopkPath path) {
  if (residual.size() != gradient.size())
    throw std::invalid_argument("topk_with_feedback: residual and gradient differ in length");
  const DeviceBuffer<float> g(gradient), r(residual);
  const DeviceBuffer<std::uint8_t> payload(8 + 8 * k);
  const device::Workspace workspace(gradient.size());
  device::topk_compress_with_feedback(g.get(), r.get(), gradient.size(), k, payload.get(), workspace, nullptr, path);
  r.copy_to(residual);
  return payload.to_host();
}

void sparse_pairs_add(const std::vector<std::uint8_t>& payload, std::vector<float>& dense) {
  std::uint32_t header[2] = {0, 0};
  if (payload.size() >= 8) std::memcpy(header, payload.data(), 8);
  const std::size_t k = header[1];
  if (payload.size() < 8 || header[0] != dense.size() || payload.size() != 8 + 8 * k)
    throw std::invalid_argument("sparse_pairs_add: the payload is not one for dense's length");
  for (std::size_t j = 0; j < k; ++j) {
    std::uint32_t index;
    std::memcpy(&index, payload.data() + 8 + 4 * j, 4);
    if (index >= dense.size()) throw std::out_of_range("sparse_pairs_add: index beyond dense");
  }
  const DeviceBuffer<std::uint8_t> in(payload);
  const DeviceBuffer<float> out(dense);
  device::sparse_pairs_add(in.get(), k, out.get(), nullptr);
  out.copy_to(dense);
}

std::vector<float> block_with_feedback(const std::vector<float>& gradient, std::vector<float>& residual,
                                       std::size_t offset, std::size_t k) {
  if (residual.size() != gradient.size() || offset + k > gradient.size())
    throw std::invalid_argument("block_with_feedback: the block or the residual does not fit the gradient");
  const DeviceBuffer<float> g(gradient), r(residual), block(k);
  device::block_with_feedback(g.get(), r.get(), gradient.size(), offset, k, block.get(), nullptr);
  r.copy_to(residual);
  return block.to_host();
}

void block_add(const std::vector<float>& block, std::size_t offset, std::vector<float>& dense) {
  if (offset + block.size() > dense.size()) throw std::invalid_argument("block_add: the block does not fit dense");
  const DeviceBuffer<float> in(block), out(dense);
  device::block_add(in.get(), offset, block.size(), out.get(), nullptr);
  out.copy_to(dense);
}

namespace {

void check_chunks(const char* what, std::size_t size, std::size_t rows, std::size_t cols, const DctBases& bases) {
  if (bases.n1 == 0 || bases.n2 == 0 || rows % bases.n1 != 0 || cols % bases.n2 != 0 || size != rows * cols ||
      bases.rows.size() != bases.n1 * bases.n1 || bases.cols.size() != bases.n2 * bases.n2)
    throw std::invalid_argument(std::string(what) + ": the layer is not whole chunks of the bases' sides");
}

}  // namespace

std::vector<float> dct_chunks_encode(const std::vector<float>& x, std::size_t rows, std::size_t cols,
                                     const DctBases& bases) {
  check_chunks("dct_chunks_encode", x.size(), rows, cols, bases);
  const DeviceBuffer<float> in(x), row_basis(bases.rows), col_basis(bases.cols), out(x.size());
  device::dct_chunks_encode(in.get(), rows, cols, bases.n1, bases.n2, row_basis.get(), col_basis.get(), out.get(),
                            nullptr);
  return out.to_host();
}

std::vector<float> dct_chunks_decode(const std::vector<float>& coefficients, std::size_t rows, std::size_t cols,
                                     const DctBases& bases) {
  check_chunks("dct_chunks_decode", coefficients.size(), rows, cols, bases);
  const DeviceBuffer<float> in(coefficients), row_basis(bases.rows), col_basis(bases.cols), out(coefficients.size());
  device::dct_chunks_decode(in.get(), rows, cols, bases.n1, bases.n2, row_basis.get(), col_basis.get(), out.get(),
                            nullptr);
  return out.to_host();
}

ChunkTopkResult chunk_topk(const std::vector<float>& coefficients, std::size_t chunk, std::size_t k) {
  if (chunk == 0 || chunk > 4096 || coefficients.size() % chunk != 0 || k == 0 || k > chunk)
    throw std::invalid_argument("chunk_topk: chunks of 1 to 4096 coefficients, 1 <= k <= chunk");
  const std::size_t chunks = coefficients.size() / chunk;
  const DeviceBuffer<float> in(coefficients), value(chunks * k);
  const DeviceBuffer<std::uint16_t> index(chunks * k);
  device::chunk_topk(in.get(), chunks, chunk, k, index.get(), value.get(), nullptr);
  return {index.to_host(), value.to_host()};
}

}  // namespace laconic::compress::cuda
