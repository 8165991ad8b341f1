#include "engine/compress/block_randomk.hpp"

#include <cstring>

#include "engine/compress/topk.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<BlockRandomkOptions> BlockRandomkOptions::fields() {
  using O = BlockRandomkOptions;
  return OptionFields<O>()
      .field("ratio", &O::ratio, "fraction of elements sent per step as one contiguous block")
      .flag("error_feedback", &O::error_feedback, "accumulate what was not sent and add it to the next gradient");
}

std::size_t block_randomk_payload_bytes(std::size_t k) { return 4 * k; }

void BlockRandomkCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  const std::size_t k = topk_count(ratio_, n);
  // A fresh generator per step: the offset is a function of (run_seed, step) alone, which is
  // what lets every worker agree without talking.
  Rng rng(derive_seed(run_seed_, step_));
  offset_ = n == 0 ? 0 : static_cast<std::size_t>(rng.below(n - k + 1));
  k_ = k;
  n_ = n;
  compressed_ = true;
  ++step_;
  payload.resize(block_randomk_payload_bytes(k));
  if (k > 0) std::memcpy(payload.data(), gradient.data() + offset_, 4 * k);
}

void BlockRandomkCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(compressed_, "a block_randomk payload decodes against the offset of this ",
                  "worker's compress() for the same step, and none has run yet");
  LACONIC_ENFORCE(dense.size() == n_, "expected a dense vector of ", n_, " elements (this step's gradient), got ",
                  dense.size());
  LACONIC_ENFORCE(payload.size() == block_randomk_payload_bytes(k_), "expected ", block_randomk_payload_bytes(k_),
                  " payload bytes for k=", k_, ", got ", payload.size());
  float* block = dense.data() + offset_;
  for (std::size_t i = 0; i < k_; ++i) {
    float value;
    std::memcpy(&value, payload.data() + 4 * i, 4);
    block[i] += value;
  }
}

}  // namespace laconic::compress
