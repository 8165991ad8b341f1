#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/compress/random.hpp"
#include "engine/compress/step_ratio.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct RandomkOptions {
  StepRatio ratio = 0.01;
  bool shared_seed = true;
  bool error_feedback = true;

  static OptionFields<RandomkOptions> fields();
};

/// Bytes of a Random-k payload carrying k entries: 4*k (values only) with a shared seed,
/// 8 + 8*k (header and (index, value) pairs) without.
std::size_t randomk_payload_bytes(std::size_t k, bool shared_seed);

/// Random-k without error feedback. Each compress() is one step: it draws k = ceil(ratio*n)
/// distinct indices uniformly at random (Floyd's algorithm on a reused bitmap, O(k + n/64)),
/// ascending, and sends the gradient's values there, unscaled.
///
/// Wire format (little-endian, packed):
///  - shared_seed = true: k float32 values, nothing else (4*k bytes). The indices are not sent:
///    every worker draws them from derive_seed(run_seed, step), so payloads of different workers
///    can be summed as float arrays. A header would not survive that sum, so decompress_add
///    decodes against the indices of this compressor's last compress() (same step on every
///    worker) and checks the payload holds exactly 4*k bytes and `dense` has that step's n.
///  - shared_seed = false: uint32 n, uint32 k, then k uint32 indices, then k float32 values
///    (8 + 8*k bytes; the Top-k layout). Indices come from a private stream per rank.
class RandomkCodec : public Compressor {
 public:
  RandomkCodec(StepRatio ratio, bool shared_seed) : ratio_(ratio), shared_seed_(shared_seed) {}
  std::string name() const override { return "randomk"; }
  Capabilities capabilities() const override {
    return {.summable = shared_seed_, .self_decoding = !shared_seed_, .sparse_pairs = !shared_seed_};
  }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  void set_seed(std::uint64_t run_seed, int rank) override;
  void save_state(StateWriter& out) const override {
    out.u64(step_);
    out.array(rng_.state_words());
  }
  void load_state(StateReader& in) override {
    step_ = in.u64();
    in.array_exact(rng_.state_words());
  }

  /// The indices chosen by the last compress(), ascending (empty before the first).
  std::span<const std::uint32_t> indices() const { return indices_; }
  /// Number of compress() calls so far; the next call draws with this step number.
  std::uint64_t step() const { return step_; }

 protected:
  void on_step(const StepPoint& point) override { ratio_.set_step(point); }

 private:
  void choose_indices(std::size_t n, std::size_t k);

  StepRatio ratio_;
  bool shared_seed_;
  std::uint64_t base_seed_ = 0;  // run_seed (shared) or a per-rank stream of it
  std::uint64_t step_ = 0;
  bool compressed_ = false;             // a compress() has run: indices_ and n_ are valid
  std::size_t n_ = 0;                   // gradient length of the last compress()
  std::vector<std::uint32_t> indices_;  // indices of the last compress(), ascending
  std::vector<std::uint64_t> chosen_;   // Floyd's scratch bitmap, all zero between calls
  Rng rng_;
};

/// Random-k sparsification (Stich et al. 2018; compared with shared and private indices in
/// Eghlidi & Jaggi 2020, "Sparse Communication for Training Deep Networks"), with error feedback
/// when the option is on.
class RandomkCompressor : public WithErrorFeedback<RandomkCodec> {
 public:
  explicit RandomkCompressor(RandomkOptions options)
      : WithErrorFeedback(options.error_feedback, options.ratio, options.shared_seed) {}
  std::span<const std::uint32_t> indices() const { return codec().indices(); }
};

}  // namespace laconic::compress
