#pragma once
// A link that changes during a run: link { trace = "bw.csv" }, a CSV of the moments the link
// changes, each with its new bandwidth and optionally its new latency (docs/network-model.md,
// "Links that change").
#include <string>
#include <vector>

#include "engine/core/units.hpp"

namespace laconic::comm {

/// Reads a trace: one change per line, "TIME,BANDWIDTH[,LATENCY]" ("60s,100Mbit" or
/// "2min,1Gbit,50us"; a bare TIME is seconds), a first line that names the columns
/// ("time,bandwidth,latency") skipped, blank lines and lines from '#' ignored. Times must rise.
/// ConfigError naming the file and line of what is wrong, or a file that cannot be read.
std::vector<LinkChange> read_link_trace(const std::string& path);

/// What the trace says in one line, for the run fact network_emulation: "2 changes from 10 s to
/// 70 s, 100 to 1000 Mbit/s".
std::string describe_trace(const std::vector<LinkChange>& trace);

}  // namespace laconic::comm
