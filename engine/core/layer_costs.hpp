#pragma once
// What one compressor costs on each layer of a model, measured on this host: the bytes of its
// payload for that layer alone and the seconds to encode it and to decode one payload, beside
// the same for the layer sent dense (fp32, `none`). `laconic advise` measures it for the
// candidates it ranks (engine/layer_codecs.cpp) and records it as the run fact `layer_costs`;
// reports/layer_plan.hpp decides from it which layers to leave dense on a link.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace laconic {

struct LayerCodecCost {
  std::size_t elements = 0;
  double payload_bytes = 0;     ///< the compressor's payload for this layer alone
  double compress_seconds = 0;  ///< one compress() of the layer (error feedback included), median
  double decode_seconds = 0;    ///< one decompress_add() of its payload, median
  double dense_compress_seconds = 0;  ///< the same for `none`: the layer as fp32
  double dense_decode_seconds = 0;

  bool operator==(const LayerCodecCost&) const = default;
};

struct LayerCodecCosts {
  /// Raised when a field changes meaning; a fact of another version is not read.
  static constexpr int kVersion = 1;
  static constexpr const char* kFact = "layer_costs";

  /// The compressor's payloads sum in compressed form (an allreduce carries them, each worker
  /// decodes one sum); else they are gathered and every worker decodes every one.
  bool summable = false;
  std::vector<LayerCodecCost> layers;  ///< in the gradient's order

  bool operator==(const LayerCodecCosts&) const = default;

  std::string to_json_text() const;
  /// The fact's text read back; nullopt-like empty layers for another version or bad JSON.
  static LayerCodecCosts from_json_text(const std::string& text);
};

}  // namespace laconic
