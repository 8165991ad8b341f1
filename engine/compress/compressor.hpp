#pragma once
// The Compressor interface: a gradient (a flat float vector) becomes a payload of bytes in a real
// packed wire format, and a payload is added back into a dense vector. Compressors own their
// per-worker state (residuals, RNG).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace laconic::compress {

/// The bytes one worker hands to the topology for one exchange.
using Payload = std::vector<std::uint8_t>;

class Compressor {
 public:
  virtual ~Compressor() = default;

  /// The registry name ("topk").
  virtual std::string name() const = 0;

  /// True when payloads of different workers can be summed element-wise as float32 arrays in
  /// compressed form (then the topology may allreduce them); false when they must be gathered
  /// and decompressed one by one.
  virtual bool summable() const = 0;

  /// Encodes `gradient` into `payload` (replacing its contents). May update internal state.
  virtual void compress(std::span<const float> gradient, Payload& payload) = 0;

  /// Adds the decoded payload into `dense` (which has the gradient's length). Throws
  /// InvariantError when the payload does not match the length.
  virtual void decompress_add(const Payload& payload, std::span<float> dense) const = 0;

  /// Seeds the compressor's randomness once, before the first compress(). Randomness shared by
  /// all workers (shared-seed random-k) derives from `run_seed` alone; private randomness
  /// (stochastic rounding) from `run_seed` and `rank`. Deterministic compressors ignore it.
  virtual void set_seed(std::uint64_t run_seed, int rank) {
    (void)run_seed;
    (void)rank;
  }

  /// Tells the compressor the epoch (from 0) of the steps that follow; called at the start of
  /// every epoch (DGC warms its ratio up over the first epochs).
  virtual void set_epoch(std::int64_t epoch) { (void)epoch; }

  /// Turns `sum`, the sum over all `workers` of their decoded payloads, into the update every
  /// worker applies. The default is the mean; signSGD's majority vote takes the sign instead.
  virtual void aggregate(std::span<float> sum, int workers) const {
    const float scale = 1.0f / static_cast<float>(workers);
    for (float& v : sum) v *= scale;
  }
};

}  // namespace laconic::compress
