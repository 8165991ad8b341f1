#pragma once
// The base of the codecs whose only state is a private random stream (stochastic rounding,
// sampling): seeding, checkpointing and capabilities written once for QSGD, TernGrad and adaptive.
#include <cstdint>

#include "engine/compress/compressor.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

/// A codec drawing from `Stream` (Rng or UniformStream) seeded with derive_seed(run_seed,
/// stream + rank) by set_seed(), and as if set_seed(0, 0) before; a checkpoint holds the
/// stream's state. Each rank draws its own numbers, so payloads are not summable.
template <class Stream>
class PrivateStreamCodec : public Compressor {
 public:
  Capabilities capabilities() const override { return {.summable = false}; }
  void set_seed(std::uint64_t run_seed, int rank) override {
    LACONIC_ENFORCE(rank >= 0, "rank must be >= 0, got ", rank);
    rng_.reseed(derive_seed(run_seed, stream_ + static_cast<std::uint64_t>(rank)));
  }
  void save_state(StateWriter& out) const override { out.array(rng_.state_words()); }
  void load_state(StateReader& in) override { in.array_exact(rng_.state_words()); }

 protected:
  /// `stream`: the codec's entry in compress::streams.
  explicit PrivateStreamCodec(std::uint64_t stream) : rng_(derive_seed(0, stream)), stream_(stream) {}

  Stream rng_;

 private:
  std::uint64_t stream_;
};

}  // namespace laconic::compress
