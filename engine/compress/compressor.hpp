#pragma once
// The Compressor interface: a gradient (a flat float vector) becomes a payload of bytes in a real
// packed wire format, and a payload is added back into a dense vector. Compressors own their
// per-worker state (residuals, RNG).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/compress/state.hpp"
#include "engine/core/step_value.hpp"

namespace laconic::compress {

/// The bytes one worker hands to the topology for one exchange.
using Payload = std::vector<std::uint8_t>;

/// The dimensions of one parameter tensor ({6, 1, 5, 5} for a conv weight, {10} for a bias).
using LayerShape = std::vector<std::size_t>;

/// The collective a compressor that exchanges itself (PowerSGD) may use: an element-wise sum
/// over all workers, in place. The topology implements it and counts its time and bytes.
class SumReducer {
 public:
  virtual ~SumReducer() = default;
  virtual void sum(std::span<float> values) = 0;
  virtual int workers() const = 0;
};

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

  /// Tells the compressor where training stands, before every step (after set_epoch() at an
  /// epoch's start): fields given as functions of (epoch, step) take their value here (a
  /// `ratio` schedule). Every party that compresses for the step calls it with the same point.
  virtual void set_step(const StepPoint& point) { (void)point; }

  /// Turns `sum`, the sum over all `workers` of their decoded payloads, into the update every
  /// worker applies. The default is the mean; signSGD's majority vote takes the sign instead.
  virtual void aggregate(std::span<float> sum, int workers) const {
    const float scale = 1.0f / static_cast<float>(workers);
    for (float& v : sum) v *= scale;
  }

  /// Writes the per-worker state a checkpoint must keep (residuals, momentum, RNG states, step
  /// counters; not scratch) and reads it back. A restored compressor gets set_seed(),
  /// set_layer_shapes() and set_epoch() as a fresh one, then load_state(), and continues with
  /// the same payloads the saved one would have sent. Stateless compressors keep the defaults.
  virtual void save_state(StateWriter& out) const { (void)out; }
  virtual void load_state(StateReader& in) { (void)in; }

  /// True when a payload carries everything needed to decode it; false when decoding also
  /// needs the sender's state of that step (shared-seed random-k and block-random-k decode
  /// against the indices their own last compress() drew), so only a party that compressed the
  /// same step can decode (a parameter server cannot).
  virtual bool self_decoding() const { return true; }

  /// True when the payload is the sparse layout of sparse_pairs.hpp (header, indices, values),
  /// so that `chain` can compress its values further.
  virtual bool sparse_pairs() const { return false; }

  /// Tells the compressor the shapes of the layers its gradient is made of, in order, before
  /// the first compress(). Compressors that see the gradient as matrices (PowerSGD) use it.
  virtual void set_layer_shapes(const std::vector<LayerShape>& shapes) { (void)shapes; }

  /// True when compressing the gradient in groups of whole layers, each group with a compressor
  /// of its own of this kind, is the same method as compressing it whole: element-wise codecs
  /// (none, fp16, signSGD) and compressors that work layer by layer (PowerSGD, scope = "layer").
  /// Only these may be exchanged bucket by bucket, overlapped with backward (allreduce
  /// { overlap = true }): a global Top-k of each bucket is not the global Top-k.
  virtual bool separable_by_layer() const { return false; }

  /// True for compressors whose exchange needs more than one collective (PowerSGD: P, then Q).
  /// The topology then calls exchange() instead of compress() / decompress_add() / aggregate().
  virtual bool exchanges_itself() const { return false; }

  /// Replaces `gradient` by the update every worker applies, using only `reducer`; returns the
  /// bytes of this worker's compressed contribution (what payload_bytes reports).
  virtual std::size_t exchange(std::span<float> gradient, SumReducer& reducer);
};

}  // namespace laconic::compress
