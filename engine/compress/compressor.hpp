#pragma once
// The Compressor interface: a gradient (a flat float vector) becomes a payload of bytes in a real
// packed wire format, and a payload is added back into a dense vector. Compressors own their
// per-worker state (residuals, RNG).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/compress/state.hpp"
#include "engine/core/step_value.hpp"
#include "engine/core/wire_codec.hpp"

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

/// The narrow format in which an allreduce may sum a compressor's payloads while they travel
/// (Capabilities::summed_in_transit), or None: fp16 and bf16 casts; 8 and 4 bits with a scale
/// per chunk, requantized at each hop (quantized_allreduce).
enum class TransitFormat { None, Fp16, Bf16, Int8, Int4 };

/// "fp16", "bf16", "int8", "int4", or "" for None: the name the run fact `resolved` records.
std::string transit_format_name(TransitFormat format);

/// What a compressor can do, asked by topologies, schedules and checks. Each compressor says all
/// of it in one place, capabilities(); a decorator (error feedback, scope) returns its inner
/// compressor's and changes only what it changes, so that it cannot drop one by forgetting a
/// method (tests/compress/contracts_test.cpp checks every registered compressor).
struct Capabilities {
  /// Payloads of different workers can be summed element-wise as float32 arrays in compressed
  /// form (then the topology may allreduce them); otherwise they are gathered and decompressed
  /// one by one.
  bool summable = false;
  /// A payload carries everything needed to decode it; false when decoding also needs the
  /// sender's state of that step (shared-seed random-k and block-random-k decode against the
  /// indices their own last compress() drew), so only a party that compressed the same step can
  /// decode (a parameter server cannot).
  bool self_decoding = true;
  /// The payload is the sparse layout of sparse_pairs.hpp (header, indices, values), so that
  /// `chain` can compress its values further.
  bool sparse_pairs = false;
  /// Compressing the gradient in groups of whole layers, each group with a compressor of its own
  /// of this kind, is the same method as compressing it whole: element-wise codecs (none, fp16,
  /// signSGD) and compressors that work layer by layer (PowerSGD, scope = "layer"). Only these
  /// may be exchanged bucket by bucket, overlapped with backward (allreduce { overlap = true }):
  /// a global Top-k of each bucket is not the global Top-k.
  bool separable_by_layer = false;
  /// The payload is the gradient itself, in fp32, and decodes to exactly it (none): what
  /// exchanging whole models (gossip) needs.
  bool lossless = false;
  /// A payload's size follows from the gradient's size alone (fp16, bf16, signsgd, signum), so
  /// every worker's payload of a step has the same size and gathering them needs no round of
  /// sizes first (Communicator::allgather_same_size).
  bool fixed_size = false;
  /// Under allreduce, the payloads are summed in this format as they travel, as PyTorch DDP's
  /// fp16 hook and NCCL reduce half precision (fp16, bf16): each worker's gradient divided by
  /// the workers and cast, every hop decoding the partial sum, adding its own in fp32 and
  /// rounding again (Communicator::allreduce_sum_encoded); the bytes are the fp32 ring's in the
  /// format, whatever the workers. None: summed as fp32 arrays (summable) or gathered.
  TransitFormat summed_in_transit = TransitFormat::None;

  bool operator==(const Capabilities& other) const = default;
};

/// What a compressor is, known from its options without building it (Registry::traits): the
/// options struct's `static CompressorTraits traits(const Options&)`; Traits{} for the others.
struct CompressorTraits {
  /// Its exchange needs more than one collective (a MultiRoundCompressor: powersgd), so it works
  /// layer by layer by itself and takes no scope.
  bool multi_round = false;

  bool operator==(const CompressorTraits& other) const = default;
};

class MultiRoundCompressor;

/// What seeds a compressor's randomness (Compressor::set_seed): the run's seed (or a stream
/// derived from it) and the rank whose private randomness it is.
struct CompressorSeed {
  std::uint64_t run_seed = 0;
  int rank = 0;
};

class Compressor {
 public:
  using Traits = CompressorTraits;

  virtual ~Compressor() = default;

  /// Everything the compressor can do (Capabilities); every compressor says it, decorators
  /// return their inner one's.
  virtual Capabilities capabilities() const = 0;
  bool summable() const { return capabilities().summable; }
  bool self_decoding() const { return capabilities().self_decoding; }
  bool sparse_pairs() const { return capabilities().sparse_pairs; }
  bool separable_by_layer() const { return capabilities().separable_by_layer; }
  bool lossless() const { return capabilities().lossless; }

  /// The compressor as one whose exchange needs more than one collective (MultiRoundCompressor),
  /// or nullptr: the topology then calls its exchange() instead of compress() /
  /// decompress_add() / aggregate().
  virtual const MultiRoundCompressor* multi_round() const { return nullptr; }
  MultiRoundCompressor* multi_round() { return const_cast<MultiRoundCompressor*>(std::as_const(*this).multi_round()); }
  bool exchanges_itself() const { return multi_round() != nullptr; }

  /// The codec the allreduce sums this compressor's payloads with as they travel, non-null
  /// exactly when capabilities().summed_in_transit is not None (the contracts test holds them
  /// together); it lives as long as the compressor, and one that rounds stochastically draws
  /// from the compressor's private stream, which its checkpoint keeps.
  virtual const WireCodec* transit_codec() const { return nullptr; }

  /// The registry name ("topk").
  virtual std::string name() const = 0;

  /// Encodes `gradient` into `payload` (replacing its contents). May update internal state.
  virtual void compress(std::span<const float> gradient, Payload& payload) = 0;

  /// Adds the decoded payload into `dense` (which has the gradient's length). Throws
  /// InvariantError when the payload does not match the length.
  virtual void decompress_add(const Payload& payload, std::span<float> dense) const = 0;

  /// Seeds the compressor's randomness once, before the first compress(): build_compressor
  /// (engine/compress/builtin.hpp) does, so every compressor the engine trains with comes seeded;
  /// composites pass it on to their parts. Randomness shared by all workers (shared-seed random-k) derives from `run_seed` alone; private randomness
  /// (stochastic rounding) from `run_seed` and `rank`. Deterministic compressors ignore it.
  virtual void set_seed(std::uint64_t run_seed, int rank) {
    (void)run_seed;
    (void)rank;
  }

  /// Tells the compressor where training stands, before every step; every party that
  /// compresses for the step calls it with the same point. The first point of an epoch (or the
  /// first point at all, a resumed run's included) tells it the epoch (on_epoch) before the step
  /// (on_step): the order is this method's, not its callers'.
  void advance(const StepPoint& point) {
    if (point.epoch != epoch_) {
      epoch_ = point.epoch;
      on_epoch(point.epoch);
    }
    on_step(point);
  }

  /// Turns `sum`, the sum over all `workers` of their decoded payloads, into the update every
  /// worker applies. The default is the mean; signSGD's majority vote takes the sign instead.
  virtual void aggregate(std::span<float> sum, int workers) const {
    const float scale = 1.0f / static_cast<float>(workers);
    for (float& v : sum) v *= scale;
  }

  /// Writes the per-worker state a checkpoint must keep (residuals, momentum, RNG states, step
  /// counters; not scratch) and reads it back. A restored compressor gets set_seed() and
  /// set_layer_shapes() as a fresh one, then load_state(), then advance() at the step it resumes
  /// at, and continues with the same payloads the saved one would have sent. Stateless
  /// compressors keep the defaults.
  virtual void save_state(StateWriter& out) const { (void)out; }
  virtual void load_state(StateReader& in) { (void)in; }

  /// Tells the compressor the shapes of the layers its gradient is made of, in order, before
  /// the first compress(). Compressors that see the gradient as matrices (PowerSGD) use it.
  virtual void set_layer_shapes(const std::vector<LayerShape>& shapes) { (void)shapes; }

 protected:
  /// The epoch (from 0) of the steps that follow, from advance() (DGC warms its ratio up over
  /// the first epochs). Derives settings only: a resumed run's state is loaded before it.
  virtual void on_epoch(std::int64_t epoch) { (void)epoch; }
  /// The step about to be taken, from advance(): fields given as functions of (epoch, step) take
  /// their value here (a `ratio` schedule). Compressors made of others advance them.
  virtual void on_step(const StepPoint& point) { (void)point; }

 private:
  std::int64_t epoch_ = -1;  ///< the epoch advance() last told on_epoch()
};

/// A compressor whose exchange needs more than one collective (PowerSGD: P, then Q). It has no
/// single payload to compress or decode: exchange() does the whole of it through the reducer.
class MultiRoundCompressor : public Compressor {
 public:
  using Compressor::multi_round;
  const MultiRoundCompressor* multi_round() const final { return this; }
  /// Replaces `gradient` by the update every worker applies, using only `reducer`; returns the
  /// bytes of this worker's compressed contribution (what payload_bytes reports).
  virtual std::size_t exchange(std::span<float> gradient, SumReducer& reducer) = 0;

  /// Not used: InvariantError.
  void compress(std::span<const float> gradient, Payload& payload) final;
  void decompress_add(const Payload& payload, std::span<float> dense) const final;
};

}  // namespace laconic::compress
