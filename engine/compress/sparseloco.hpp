#pragma once
// SparseLoCo's compression of DiLoCo's pseudo-gradient (Sarfi, Thérien, Lidin, Belilovsky 2025,
// "Communication Efficient LLM Pre-training with SparseLoCo", arXiv 2508.15706).
#include <cstdint>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct SparselocoOptions {
  std::int64_t chunk = 4096;
  std::int64_t topk = 64;
  std::int64_t bits = 2;
  double decay = 0.95;
  double range = 6.0;

  static OptionFields<SparselocoOptions> fields();
};

/// Per worker, with its error e (flat over the layers) and what it compresses x (under `diloco`,
/// the round's pseudo-gradient): e = decay e + x; each layer's elements in chunks of `chunk` (the
/// last one shorter), and in each chunk the `topk` largest |e| (the earlier position on a tie);
/// their values, per layer, quantized to 2^bits levels by SparseLoCo's statistics: centred on
/// their mean, cut into levels `range` standard deviations (unbiased) wide in all, each level
/// sent as the mean of the values that fell in it; e -= what was sent, decoded. The payloads are
/// gathered and aggregate() takes their mean over all workers; DiLoCo's outer step then moves
/// the shared weights by it (SparseLoCo's outer step is sgd { lr } without momentum: the decayed
/// error plays the outer momentum's part).
/// Payload, per layer: 2^bits float32 levels, then the positions within their chunks at
/// ceil(log2(chunk)) bits each, then the level of each at `bits` bits (both LSB-first,
/// bitpack.hpp, each from a byte boundary). Its size follows from the layer shapes alone.
class SparselocoCompressor : public Compressor {
 public:
  explicit SparselocoCompressor(SparselocoOptions options) : options_(options) {}

  std::string name() const override { return "sparseloco"; }
  Capabilities capabilities() const override { return {.separable_by_layer = true, .fixed_size = true}; }
  void set_layer_shapes(const std::vector<LayerShape>& shapes) override;
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  void save_state(StateWriter& out) const override { out.array(error_); }
  void load_state(StateReader& in) override { in.array_exact(std::span<float>(error_)); }

  /// Bytes of every payload.
  std::size_t payload_size() const;
  /// The error: what the payloads have not sent yet, decayed, flat over the layers.
  std::span<const float> error() const { return error_; }

 private:
  struct Layer {
    std::size_t offset = 0, size = 0, sent = 0;  // first element; elements; elements sent a step
  };
  // The layer's selected positions (flat within it, ascending) into `selected`.
  void select(const Layer& layer, std::vector<std::uint32_t>& selected) const;
  std::size_t levels() const { return std::size_t{1} << options_.bits; }
  unsigned position_bits() const;
  std::size_t layer_bytes(const Layer& layer) const;
  // Sizes the layers when set_layer_shapes() was not called: the whole gradient as one layer.
  void ensure_layers(std::size_t elements);

  SparselocoOptions options_;
  std::vector<Layer> layers_;
  std::vector<float> error_;
};

}  // namespace laconic::compress
