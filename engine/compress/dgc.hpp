#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/random.hpp"
#include "engine/compress/step_ratio.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct DgcOptions {
  StepRatio ratio = 0.001;
  double momentum = 0.9;
  double clip_norm = 0.0;
  double sample_fraction = 0.01;
  std::int64_t warmup = 4;

  static OptionFields<DgcOptions> fields();
};

/// The fraction of elements DGC sends in `epoch` (from 0): max(ratio, 0.25^(epoch+1)) while
/// epoch < warmup, `ratio` afterwards. With the defaults: 0.25, 0.0625, 0.015625,
/// 0.00390625, then 0.001 from epoch 4 on.
double dgc_epoch_ratio(double ratio, std::int64_t warmup, std::int64_t epoch);

/// Bytes of a DGC payload carrying `count` entries: the Top-k layout, 8 + 8*count.
std::size_t dgc_payload_bytes(std::size_t count);

/// Deep Gradient Compression (Lin et al. 2018, "Deep Gradient Compression: Reducing the
/// Communication Bandwidth for Distributed Training"). Each compress() is one step of worker k:
///
///  1. Local gradient clipping: if clip_norm > 0 and ||g||_2 > clip_norm (norm summed in
///     double), g is scaled by the float32 factor clip_norm / ||g||_2. This is a plain per-worker
///     clip at clip_norm; the paper's N^-1/2 scaling of the threshold for N workers is left to
///     the experiment file (set clip_norm to the global threshold / sqrt(N)).
///  2. Momentum correction: u = momentum*u + g, v = v + u (float32, u and v start at zero).
///  3. Threshold from a sample: s = ceil(sample_fraction*n) (clamped to [1, n]) indices drawn
///     uniformly with replacement from the private stream Rng(derive_seed(run_seed, 3000 +
///     rank)), s draws of Rng::below(n) per step; the threshold is the ks-th largest |v| among
///     them, ks = ceil(ratio_e*s) clamped to [1, s] (ratio_e from dgc_epoch_ratio()). Elements
///     with |v| > threshold are candidates (NaN and +-inf always are: sent on, so divergence
///     shows).
///  4. Hierarchical refinement, simply: with k = topk_count(ratio_e, n), if more than k
///     candidates pass, the k of largest |v| among them are sent (exact Top-k among the
///     candidates, ties at the k-th magnitude to the lowest indices); if k or fewer pass, all of
///     them are sent, so a step may send fewer than k entries (even none).
///  5. Momentum factor masking: at the sent positions u and v become 0; v keeps everything else.
///     This residual v is DGC's error feedback, hence no error_feedback option.
///
/// The sent values are v's at the sent positions, unscaled; aggregate() is the mean. Since DGC
/// applies the momentum itself, the optimizer's own momentum must be 0 in DGC runs.
///
/// Wire format (host byte order, packed; exactly the Top-k layout, so TopkCodec decodes it):
/// uint32 n, uint32 count, then count uint32 indices (ascending), then count float32 values.
/// dgc_payload_bytes(count) = 8 + 8*count bytes, count <= k. Not summable: each worker sends its
/// own indices.
///
/// Cost per step: one pass updates u and v and collects the candidates (plus one pass for the
/// norm when clipping); the threshold comes from the sample before that pass, by evaluating the
/// same float update at the sampled positions. Nothing is allocated once the scratch vectors
/// have reached their largest size.
class DgcCompressor : public Compressor {
 public:
  explicit DgcCompressor(DgcOptions options);
  std::string name() const override { return "dgc"; }
  Capabilities capabilities() const override { return {.summable = false, .sparse_pairs = true}; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override {
    decoder_.decompress_add(payload, dense);
  }
  /// Seeds the threshold sample from derive_seed(run_seed, 3000 + rank).
  void set_seed(std::uint64_t run_seed, int rank) override;
  void save_state(StateWriter& out) const override {
    out.array(rng_.state_words());
    out.flag(started_);
    out.array(u_);
    out.array(v_);
  }
  void load_state(StateReader& in) override {
    in.array_exact(rng_.state_words());
    started_ = in.flag();
    in.array(u_);
    in.array(v_);
  }

  /// The fraction of elements the next step may send (dgc_epoch_ratio() of the current epoch).
  double current_ratio() const { return ratio_; }
  /// The momentum-corrected gradient u after the last step, masked (empty before the first).
  std::span<const float> velocity() const { return u_; }
  /// The accumulated gradient v after the last step, masked: what is still to be sent (empty
  /// before the first).
  std::span<const float> accumulated() const { return v_; }

 protected:
  /// The epoch (from 0) whose warm-up ratio the following steps use.
  void on_epoch(std::int64_t epoch) override;
  /// With `ratio` a function: its value at `point`, warmed up as dgc_epoch_ratio() says.
  void on_step(const StepPoint& point) override;

 private:
  DgcOptions options_;
  double ratio_;            // fraction sent in the current epoch
  TopkCodec decoder_{1.0};  // only its decompress_add() is used: the wire formats are the same
  Rng rng_;
  bool started_ = false;  // the first compress() has fixed the gradient length
  std::vector<float> u_;
  std::vector<float> v_;
  // Scratch reused across steps: sampled magnitudes, candidate indices (ascending), their
  // magnitudes, and a copy that selection reorders.
  std::vector<float> sample_;
  std::vector<std::uint32_t> candidates_;
  std::vector<float> candidate_magnitudes_;
  std::vector<float> scratch_;
};

}  // namespace laconic::compress
