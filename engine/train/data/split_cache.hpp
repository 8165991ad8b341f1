#pragma once
// Splits read from files, kept once per process. `laconic run` reads a run's data before it
// forks the run's workers (EngineCatalog::preload_data), so every worker and every later run of
// the sweep finds the decoded tensors in memory it shares with the controller, copy-on-write:
// no worker decodes a file or faults in fresh pages for it (docs/architecture.md, "Processes").
#include <functional>
#include <string>

#include "engine/train/data/dataset.hpp"

namespace laconic::train {

/// The split stored under `key` (what identifies its files and their decoding: paths,
/// normalization), loaded by `load` the first time. The tensors are shared with every caller,
/// who must not modify them in place. Thread-safe: the ranks of a test share one process.
DataSplit cached_split(const std::string& key, const std::function<DataSplit()>& load);

/// A file's part of a key: its path, size and modification time, so that a file replaced
/// since it was cached is read again. "" parts for a file that does not exist.
std::string file_key(const std::string& path);

}  // namespace laconic::train
