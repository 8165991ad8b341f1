#include "torch_reference.hpp"

#include <cmath>

namespace laconic::bench {

torch::Tensor torch_topk_roundtrip(const torch::Tensor& g, double ratio) {
  const auto k = static_cast<std::int64_t>(std::ceil(ratio * static_cast<double>(g.numel())));
  auto [magnitudes, indices] = g.abs().topk(k, 0, true, false);
  auto values = g.index_select(0, indices);
  return torch::zeros_like(g).index_put_({indices}, values);
}

torch::Tensor torch_qsgd_roundtrip(const torch::Tensor& g, int levels, std::int64_t bucket) {
  const std::int64_t n = g.numel();
  const std::int64_t padded = (n + bucket - 1) / bucket * bucket;
  auto x = torch::constant_pad_nd(g, {0, padded - n}).view({-1, bucket});
  auto norms = x.norm(2, 1, true);
  auto scaled = x.abs() / norms.clamp_min(1e-30) * levels;
  auto lower = scaled.floor();
  auto level = lower + (torch::rand_like(scaled) < (scaled - lower)).to(torch::kFloat);
  auto decoded = x.sign() * level.to(torch::kUInt8).to(torch::kFloat) * norms / levels;
  return decoded.view(-1).narrow(0, 0, n);
}

torch::Tensor torch_fp16_roundtrip(const torch::Tensor& g) { return g.to(torch::kHalf).to(torch::kFloat); }

torch::Tensor torch_uniform_roundtrip(const torch::Tensor& g, int bits) {
  const double bins = std::ldexp(1.0, bits);
  auto lo = g.min(), hi = g.max();
  auto width = (hi - lo) / bins;
  auto index = ((g - lo) / width.clamp_min(1e-30)).floor().clamp(0, bins - 1).to(torch::kInt16);
  return lo + (index.to(torch::kFloat) + 0.5) * width;
}

}  // namespace laconic::bench
