#pragma once
// `laconic advise FILE --workers N --link BANDWIDTH[,LATENCY]`: which of the experiment's
// candidates (its sweep) reaches the target soonest on that link at N workers, and how sure that
// is (docs/advise.md). It trains each candidate as a short probe run at N workers, placed as
// threads of one process, on the link (the experiment's runs with --set workers=N,
// placement=threads, network.bandwidth/latency), records them like any run under the experiment
// "NAME-advise-wN-LINK", then prints advise::advice_of's ranked table and records each
// candidate's prediction as its runs' fact `advice`.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "advise/probes.hpp"

namespace laconic::cli {

/// Runs the probes (resuming those already recorded), then prints the advice. 0 when it could
/// rank at least one candidate, 1 when no probe finished, 2 for a wrong argument (ConfigError),
/// 130 when `stop` was set before any probe finished.
int advise_command(const advise::AdviseOptions& args, const std::atomic<bool>& stop);

}  // namespace laconic::cli
