#pragma once
#include <memory>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct ChainOptions {
  ComponentSpec first{"compressor", "topk", {{"ratio", 0.01}}};
  ComponentSpec second{"compressor", "qsgd", {}};
  bool error_feedback = true;

  static OptionFields<ChainOptions> fields();
  /// With the chain's error feedback on, sets the children's own `error_feedback` to false (a
  /// child feeding back too would feed the same error back twice).
  static void normalize(ComponentSpec& spec);
};

/// Two compressors in a row: `first` picks the entries, `second` compresses their values
/// ("Top-k and then QSGD on the kept values", as in the compressed parameter-server methods of
/// Kothari 2021). `first` must send either a float array (shared-seed randomk, block_randomk:
/// the whole payload goes through `second`) or the sparse (index, value) layout (topk,
/// threshold, dgc, randomk without shared seed: the indices are sent as they are, the values go
/// through `second`).
///
/// Wire format, first sparse: uint32 n, uint32 count, count uint32 indices (first's header and
/// indices), then second's payload of the count values: 8 + 4*count + second's bytes.
/// First a float array: second's payload of first's values, nothing else; the count is the one
/// of the last compress() (the same on every worker, as for shared-seed random-k).
/// Summable when both are (then second's payload is a float array as well).
class ChainCodec : public Compressor {
 public:
  /// Builds both from the built-in registry; ConfigError when `first` is neither kind of
  /// sparsifier above, or either exchanges itself.
  ChainCodec(const ComponentSpec& first, const ComponentSpec& second);

  std::string name() const override { return "chain"; }
  /// Summable when both are; a float-array first is decoded against the count of the last
  /// compress(); the payload is the chain's own layout.
  Capabilities capabilities() const override {
    return {.summable = first_->summable() && second_->summable(),
            .self_decoding = !first_->summable() && first_->self_decoding() && second_->self_decoding()};
  }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  void set_seed(std::uint64_t run_seed, int rank) override;
  void save_state(StateWriter& out) const override {
    first_->save_state(out);
    second_->save_state(out);
  }
  void load_state(StateReader& in) override {
    first_->load_state(in);
    second_->load_state(in);
  }
  /// The first compressor's (the mean for every sparsifier).
  void aggregate(std::span<float> sum, int workers) const override { first_->aggregate(sum, workers); }

 protected:
  void on_step(const StepPoint& point) override;

 private:
  std::unique_ptr<Compressor> first_, second_;
  Payload inner_;                      // first's payload of the last compress()
  std::size_t last_count_ = 0;         // values first kept in the last compress()
  mutable std::vector<float> values_;  // decoded values, reused
  mutable Payload rebuilt_;            // first's float-array payload, rebuilt for decoding
};

/// `chain { first, second, error_feedback }`.
class ChainCompressor : public WithErrorFeedback<ChainCodec> {
 public:
  explicit ChainCompressor(const ChainOptions& options)
      : WithErrorFeedback(options.error_feedback, options.first, options.second) {}
};

}  // namespace laconic::compress
