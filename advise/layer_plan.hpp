#pragma once
// Which layers to leave dense, from measured costs (docs/advise.md, "Which layers to leave
// dense"): each layer's exchange on a link, sent dense (fp32) or compressed, from a candidate's
// per-layer costs measured on this host (engine/core/layer_costs.hpp) and the link's
// bandwidth, and the `min_size` whose split (smaller layers dense, the rest compressed, one
// compressor per layer: scope = "layer") costs least. What `laconic advise` prints and the
// report's section "Advice" shows, from the same costs (the run fact `layer_costs`).
#include <cstddef>
#include <string>
#include <vector>

#include "engine/core/hardware_profile.hpp"
#include "engine/core/layer_costs.hpp"
#include "engine/core/units.hpp"
#include "reports/table.hpp"

namespace laconic::advise {

// The report's model, answer and tables, which the advisor reads and builds on.
using reports::Table;

/// One layer on the link: seconds per step and worker of its part of the exchange, sent dense
/// or compressed (its bytes over the link's bandwidth, as the collective that carries the
/// candidate's payload sends them, plus encoding and decoding as measured).
struct LayerChoice {
  std::size_t index = 0;
  std::size_t elements = 0;
  double dense_bytes = 0, compressed_bytes = 0;  ///< the layer's payload, each way
  double dense_seconds = 0, compressed_seconds = 0;
  bool dense = false;  ///< left dense under the chosen min_size
};

/// One split (scope = "layer", layers under min_size dense) per step and worker.
struct LayerSplit {
  std::size_t min_size = 0;
  std::size_t dense_layers = 0;
  /// Its payloads sum (a summable compressor, or every layer dense): an allreduce carries them
  /// and each worker decodes one sum; else they are gathered.
  bool summed = false;
  double link_bytes = 0;     ///< bytes a worker sends: (p-1) x payload gathered, 2 (p-1)/p x payload summed
  double messages = 0;       ///< messages a worker sends (LayerMessages)
  double codec_seconds = 0;  ///< encoding, and decoding p payloads (gathered) or one sum
  double seconds = 0;        ///< messages and link_bytes on the link + codec_seconds
};

/// Messages per step and worker of the exchange, as probes sent them: the candidate's own
/// collective (every split that compresses a layer), and the dense allreduce (the split that
/// leaves every layer dense; the same as `own` for a summable candidate). 0: left out.
struct LayerMessages {
  double own = 0;
  double dense = 0;
};

struct LayerPlan {
  LinkSpec link;
  int workers = 0;
  bool summable = false;
  LayerCodecCosts costs;  ///< what it was planned from
  LayerMessages messages;
  std::vector<LayerChoice> layers;
  /// The min_size (elements) whose split costs least; 0: compress every layer. Ties go to the smaller.
  std::size_t min_size = 0;
  /// Seconds per step and worker of the layers' exchange: every layer compressed (min_size = 0,
  /// scope = "layer"), split at min_size, every layer dense, and each layer its own best way
  /// (some compressed, in the candidate's collective, or every one dense, summed).
  double all_compressed = 0, planned = 0, all_dense = 0, per_layer_best = 0;
};

/// What the plan's seconds are, for the text beside them.
inline constexpr const char* kLayerPlanBasis =
    "each layer's bytes on the link as its collective sends them, plus encoding and decoding as measured on this "
    "host or as a hardware profile costs them, one compressor per layer; a split's messages as the probes sent them "
    "(every layer dense: the dense probe's); overlap left out: a projection";

/// The plan for a candidate of `costs` at `workers` on `link`. The bytes a worker sends for a
/// payload of b bytes: (p-1) b when gathered (ring allgatherv), 2 (p-1)/p b when summed (ring
/// allreduce); decoding: p payloads when gathered, one sum when summed. A split that leaves every
/// layer dense sums whatever the compressor. Each split pays the link's per-message costs for
/// `messages` (the layers of one exchange travel in one payload); a layer's own seconds do not.
LayerPlan plan_layers(const LayerCodecCosts& costs, const LinkSpec& link, int workers, LayerMessages messages = {});

/// The plan's figures for the split at `min_size` (any, not only the chosen one): what
/// `laconic advise --check` sets beside full runs with scope = "layer".
LayerSplit split_at(const LayerPlan& plan, std::size_t min_size);

/// The costs with the codec seconds of a hardware profile's compressor (per call + per element,
/// docs/hardware.md) instead of this host's; the bytes stay. A dense layer costs nothing to code
/// there: a profile measures no fp32 copy.
LayerCodecCosts costs_on_hardware(const LayerCodecCosts& measured, const CompressorCost& cost);

/// One row per layer: elements, bytes and seconds each way, and which it is sent under min_size.
Table layer_plan_table(const LayerPlan& plan, const std::string& candidate);

/// "scope = \"layer\", min_size = 151: 6 of 10 layers (386 elements) dense, the exchange 57.1 us per
/// step and worker instead of 58.3 us compressing every layer (2.1% less); ..."; or that compressing
/// every layer, or none, is best.
std::string layer_plan_summary(const LayerPlan& plan);

}  // namespace laconic::advise
