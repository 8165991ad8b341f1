#pragma once
// The same compressors written with plain LibTorch tensor ops, the way the Python frameworks
// implement them: the baseline laconic's kernels are measured against. Payloads stay tensors
// (values, indices, levels) rather than packed bytes, which favours these versions.
#include <torch/torch.h>

namespace laconic::bench {

/// Top-k by magnitude; returns the dense reconstruction (compress + decompress).
torch::Tensor torch_topk_roundtrip(const torch::Tensor& g, double ratio);

/// QSGD with `levels` levels per bucket of `bucket` elements, stochastic rounding.
torch::Tensor torch_qsgd_roundtrip(const torch::Tensor& g, int levels, std::int64_t bucket);

/// Cast to fp16 and back.
torch::Tensor torch_fp16_roundtrip(const torch::Tensor& g);

/// Min-max uniform quantization to `bits` bits, decoded to bin centres.
torch::Tensor torch_uniform_roundtrip(const torch::Tensor& g, int bits);

}  // namespace laconic::bench
