#pragma once
#include <cstdint>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/compress/random.hpp"
#include "engine/compress/step_ratio.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct BlockRandomkOptions {
  StepRatio ratio = 0.01;
  bool error_feedback = true;

  static OptionFields<BlockRandomkOptions> fields();
};

/// Bytes of a Block-random-k payload carrying a block of k elements: 4*k (values only).
std::size_t block_randomk_payload_bytes(std::size_t k);

/// Block-random-k without error feedback. Each compress() is one step: it sends the k =
/// ceil(ratio*n) contiguous elements starting at an offset drawn uniformly from [0, n-k] by
/// Rng(derive_seed(run_seed, step)), unscaled. The offset depends on the run seed and the step
/// only, so all workers send the same block.
///
/// Wire format: k float32 values (little-endian), nothing else (4*k bytes). Payloads of
/// different workers are summed as float arrays by allreduce, which no header would survive, so
/// decompress_add decodes against the offset of this compressor's last compress() (same step on
/// every worker) and checks the payload holds exactly 4*k bytes and `dense` has that step's n.
class BlockRandomkCodec : public Compressor {
 public:
  explicit BlockRandomkCodec(StepRatio ratio) : ratio_(ratio) {}
  std::string name() const override { return "block_randomk"; }
  Capabilities capabilities() const override { return {.summable = true, .self_decoding = false}; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  /// Only `run_seed` matters: the block is the same on every rank.
  void set_seed(std::uint64_t run_seed, int rank) override {
    (void)rank;
    run_seed_ = run_seed;
  }
  void save_state(StateWriter& out) const override { out.u64(step_); }
  void load_state(StateReader& in) override { step_ = in.u64(); }

  /// First element of the block sent by the last compress() (0 before the first).
  std::size_t offset() const { return offset_; }
  /// Length of the block sent by the last compress(), elements (0 before the first).
  std::size_t block_length() const { return k_; }
  /// Number of compress() calls so far; the next call draws with this step number.
  std::uint64_t step() const { return step_; }

 protected:
  void on_step(const StepPoint& point) override { ratio_.set_step(point); }

 private:
  StepRatio ratio_;
  std::uint64_t run_seed_ = 0;
  std::uint64_t step_ = 0;
  bool compressed_ = false;  // a compress() has run: offset_, k_, n_ are valid
  std::size_t n_ = 0;        // gradient length of the last compress()
  std::size_t k_ = 0;        // block length of the last compress()
  std::size_t offset_ = 0;   // block start of the last compress()
};

/// Block-random-k sparsification (Eghlidi & Jaggi 2020, "Sparse Communication for Training Deep
/// Networks", Section 3 and Algorithm 1), with error feedback when the option is on.
class BlockRandomkCompressor : public WithErrorFeedback<BlockRandomkCodec> {
 public:
  explicit BlockRandomkCompressor(BlockRandomkOptions options)
      : WithErrorFeedback(options.error_feedback, options.ratio) {}
  std::size_t offset() const { return codec().offset(); }
};

}  // namespace laconic::compress
