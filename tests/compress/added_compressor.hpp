#pragma once
// A compressor added the way docs/architecture.md's checklist says ("Adding a component"): one
// file, here this header, and one registration line (registry_with_added_compressor). The
// registry-wide tests (contracts_test.cpp, state_test.cpp) run over this registry, so they
// check the new entry like every built-in one without an edit of their own.
#include <cstring>
#include <span>

#include "engine/compress/builtin.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/core/error.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::testing {

struct AlternatingHalvesOptions {
  bool error_feedback = true;

  static OptionFields<AlternatingHalvesOptions> fields() {
    return OptionFields<AlternatingHalvesOptions>().flag(
        "error_feedback", &AlternatingHalvesOptions::error_feedback,
        "accumulate what was not sent and add it to the next gradient");
  }
};

/// Sends the entries at even indices on even steps and those at odd indices on odd steps, as
/// float32 values only: every worker sends the same positions in a step, so payloads can be
/// summed; decoding needs the step's parity, which only a compressor that compressed the same
/// step knows (not self-decoding). The step count is its checkpointed state.
class AlternatingHalvesCodec : public compress::Compressor {
 public:
  std::string name() const override { return "alternating_halves"; }
  compress::Capabilities capabilities() const override { return {.summable = true, .self_decoding = false}; }
  void compress(std::span<const float> gradient, compress::Payload& payload) override {
    parity_ = step_++ % 2;
    n_ = gradient.size();
    payload.resize(4 * sent(n_));
    for (std::size_t i = parity_, j = 0; i < n_; i += 2, ++j) std::memcpy(payload.data() + 4 * j, &gradient[i], 4);
  }
  void decompress_add(const compress::Payload& payload, std::span<float> dense) const override {
    LACONIC_ENFORCE(dense.size() == n_ && payload.size() == 4 * sent(n_), "alternating_halves: a payload of ",
                    payload.size(), " bytes for ", dense.size(), " elements");
    for (std::size_t i = parity_, j = 0; i < n_; i += 2, ++j) {
      float v;
      std::memcpy(&v, payload.data() + 4 * j, 4);
      dense[i] += v;
    }
  }
  void save_state(StateWriter& out) const override { out.u64(step_); }
  void load_state(StateReader& in) override { step_ = in.u64(); }

 private:
  std::size_t sent(std::size_t n) const { return (n - parity_ + 1) / 2; }

  std::uint64_t step_ = 0;
  std::size_t parity_ = 0, n_ = 0;
};

class AlternatingHalvesCompressor : public compress::WithErrorFeedback<AlternatingHalvesCodec> {
 public:
  explicit AlternatingHalvesCompressor(AlternatingHalvesOptions options) : WithErrorFeedback(options.error_feedback) {}
};

/// The built-in compressors and the one above, built once.
inline const Registry<compress::Compressor>& registry_with_added_compressor() {
  static const Registry<compress::Compressor> registry = [] {
    auto r = compress::builtin_compressors();
    r.add<AlternatingHalvesCompressor, AlternatingHalvesOptions>("alternating_halves",
                                                                 "even entries on even steps, odd ones on odd steps");
    return r;
  }();
  return registry;
}

}  // namespace laconic::testing
