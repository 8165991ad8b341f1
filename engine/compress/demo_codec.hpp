#pragma once
// DeMo's exchange (Peng, Quesnelle, Kingma 2024, arXiv 2411.19870; demo.py): the codec the `demo`
// optimizer brings (engine/train/optim/demo.hpp), not a compressor of its own in the registry.
#include <cstdint>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/dct_chunks.hpp"

namespace laconic::compress {

/// What it compresses is the optimizer's update, lr x gradient (exchange = "update"). Per layer it
/// keeps DeMo's momentum delta: delta = decay delta + update; each chunk's DCT-II of delta
/// (dct_chunks.hpp); the `topk` largest coefficients of every chunk go out as 16-bit positions
/// and fp32 values (the payload: per layer, its chunks x k positions, then their values; 6 bytes
/// a coefficient sent, a fixed size); what went out is taken off delta (decoded from the
/// payload itself), and the rest stays for the next steps. The payloads are gathered;
/// decompress_add() adds each one's coefficients where they belong, and aggregate() takes at
/// every position the mean over the workers that sent one there and decodes the layers: the mean
/// update every worker then takes the sign of (demo.py's batch_decompress and decode).
class DemoCodec : public Compressor {
 public:
  DemoCodec(std::int64_t chunk, std::int64_t topk, double decay) : chunk_(chunk), topk_(topk), decay_(decay) {}

  std::string name() const override { return "demo"; }
  Capabilities capabilities() const override { return {.fixed_size = true}; }
  void set_layer_shapes(const std::vector<LayerShape>& shapes) override;
  void compress(std::span<const float> update, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  void aggregate(std::span<float> sum, int workers) const override;
  void save_state(StateWriter& out) const override { out.array(delta_); }
  void load_state(StateReader& in) override { in.array_exact(std::span<float>(delta_)); }

  /// Bytes of every payload: 6 per coefficient sent.
  std::size_t payload_size() const;
  /// DeMo's momentum, flat over the layers.
  std::span<const float> delta() const { return delta_; }

 private:
  struct Layer {
    DctChunks chunks;
    std::size_t offset = 0, k = 0;  // first element in the flat model; coefficients sent a chunk
  };
  std::int64_t chunk_, topk_;
  double decay_;
  std::vector<Layer> layers_;
  std::vector<float> delta_, coefficients_;
  mutable std::vector<float> decoded_;          // scratch of aggregate()
  mutable std::vector<std::uint32_t> senders_;  // per coefficient, from decompress_add() to aggregate()
};

}  // namespace laconic::compress
