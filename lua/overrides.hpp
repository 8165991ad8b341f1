#pragma once
// `laconic run FILE --set KEY=VALUE`: an experiment's fields changed from the command line, as
// Hydra's overrides do, checked like the file's own and so recorded in each run's configuration.
#include <string>
#include <vector>

#include "lua/context.hpp"

namespace laconic::lua {

/// Applies each "KEY=VALUE" to the checked experiment, in order:
///   epochs=1, workers=4, exchange=update          a scalar field (replaces a sweep of it)
///   compressor=topk                               a component field, with its defaults
///   network.bandwidth=100Mbit, optimizer.lr=0.1   one field of a component field: of the file's
///                                                 component (every alternative of a sweep that has
///                                                 the field), or of the default one the file omitted
///   seeds=1,2,3  runs_per_seed=3  name=other      the plan's own fields
/// VALUE reads as an integer, a number, true / false, else as text. ConfigError naming the
/// override, for a malformed one, an unknown field (with the known ones) or a value the field
/// refuses.
void apply_overrides(const LoadContext& context, ExperimentDraft& draft, const std::vector<std::string>& overrides);

}  // namespace laconic::lua
