#pragma once
// Scope of compression: a compressor sees either the whole gradient at once ("global") or one
// layer at a time ("layer", one compressor state per layer); layers smaller than `min_size`
// elements are exchanged dense (fp32) either way.
#include <functional>
#include <memory>
#include <vector>

#include "engine/compress/compressor.hpp"

namespace laconic::compress {

enum class Scope { Global, Layer };

/// "global" or "layer"; ConfigError naming `<compressor>.scope` otherwise.
Scope parse_scope(const std::string& compressor, const std::string& text);

/// Splits the flat gradient into segments: one dense segment of the small layers, then one
/// compressed segment (global) or one per large layer (layer), each with its own compressor.
/// Payload: the segments' payloads back to back; when not every segment is summable, preceded
/// by a header of uint32 segment count and one uint32 byte length per segment.
class ScopedCompressor : public Compressor {
 public:
  using Factory = std::function<std::unique_ptr<Compressor>()>;

  /// `layer_sizes`: elements of each parameter tensor, in the flat gradient's order.
  ScopedCompressor(std::vector<std::size_t> layer_sizes, Scope scope, std::size_t min_size, const Factory& make);

  std::string name() const override { return name_; }
  /// The inner compressor's, but: summable when every segment is; self-decoding when not
  /// summable and every segment is; not sparse pairs (segments are framed); separable by layer
  /// with layer scope (every layer has its compressor already; small layers are dense either
  /// way) or an element-wise inner compressor.
  Capabilities capabilities() const override;
  /// The last segment's (a compressed one, or the dense one when every layer is small): summed
  /// in transit, the whole gradient travels in that format, the small layers too.
  const WireCodec* transit_codec() const override {
    return segments_.empty() ? nullptr : segments_.back().compressor->transit_codec();
  }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  void set_seed(std::uint64_t run_seed, int rank) override;
  void aggregate(std::span<float> sum, int workers) const override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  /// Segments, for tests: the layers each one covers.
  std::size_t segment_count() const { return segments_.size(); }

 protected:
  void on_step(const StepPoint& point) override;

 private:
  struct Segment {
    std::vector<std::size_t> layers;  // indices into layer_offsets_/layer_sizes_
    std::size_t size = 0;             // elements
    bool contiguous = false;          // one layer: operate on the gradient in place
    std::unique_ptr<Compressor> compressor;
  };

  std::span<const float> gather(const Segment& s, std::span<const float> flat) const;
  void scatter_add(const Segment& s, std::span<const float> part, std::span<float> flat) const;

  std::vector<std::size_t> layer_sizes_, layer_offsets_;
  std::size_t total_ = 0;
  std::vector<Segment> segments_;
  std::string name_;
  Capabilities capabilities_;
  std::vector<std::size_t> payload_sizes_;  // of the last compress(), for summed payloads
  mutable std::vector<float> gathered_;     // scratch for non-contiguous segments
  mutable std::vector<float> decoded_;
  Payload part_;
};

}  // namespace laconic::compress
