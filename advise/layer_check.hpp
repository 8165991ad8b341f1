#pragma once
// `laconic advise --check FULL`, layer by layer (docs/advise.md, "Which layers to leave dense"):
// the plan's figures for a split (reports/layer_plan.hpp) beside full runs of the same candidate
// trained with scope = "layer" and that min_size: bytes sent, encoding and decoding, and the
// exchange, per step and worker.
#include <cstddef>
#include <string>
#include <vector>

#include "advise/advice.hpp"
#include "reports/report_model.hpp"
#include "reports/stats.hpp"
#include "reports/table.hpp"

namespace laconic::advise {

// The report's model, answer and tables, which the advisor reads and builds on.
using reports::ExperimentModel;
using reports::kNaN;
using reports::Stats;
using reports::Table;

struct LayerCheckRow {
  std::string candidate;  ///< the advised candidate's label
  bool chosen = false;    ///< the plan's split: the layers its min_size leaves dense
  LayerSplit predicted;   ///< the plan at the full runs' min_size
  /// Means per step and worker over the full runs' seeds: link_bytes, compress + decompress.
  double measured_link_bytes = kNaN, measured_codec = kNaN;
  /// compress + decompress + time_communicate (the exchange as it ran), over seeds.
  Stats measured_exchange{kNaN, kNaN, 0};
};

/// One row per configuration of `full` with scope = "layer" whose compressor is otherwise an
/// advised candidate's (its other fields equal) at the plan's workers; in the plans' order, then
/// by min_size.
std::vector<LayerCheckRow> check_layers(const std::vector<AdviceLayers>& layers, const ExperimentModel& full);

/// candidate, min_size, dense layers, bytes sent, codec and exchange, each predicted, measured and
/// the error.
Table layer_check_table(const std::vector<LayerCheckRow>& rows);

/// One line per candidate with two or more splits run: the split measured cheapest against the
/// plan's ("topk ratio=0.1: the cheapest exchange measured at min_size = 100001 (1200.0 us), the
/// plan's choice"; else how much slower the plan's choice measured, with the 95% interval of the
/// difference over seeds, Welch's, and whether that is within the noise), or "" for none.
std::string layer_check_text(const std::vector<LayerCheckRow>& rows);

}  // namespace laconic::advise
