#pragma once
// Decoded splits kept on disk between runs. Decompressing Fashion-MNIST's gzipped idx files takes
// about 0.4 s of every `laconic run`; mapping a file of the decoded tensors takes a tenth of that.
// A cache file holds the split's key (its source files' paths, sizes and modification times and
// the decoding's parameters), so a replaced source file or another normalization is decoded
// again; a file that does not match its key, or is cut short, is ignored and rewritten.
// docs/models-and-data.md, "Decoded data on disk".
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "engine/train/dataset.hpp"

namespace laconic::train {

/// The folder of decoded splits: $LACONIC_CACHE_DIR when set ("off" or "" turns the cache off),
/// else $XDG_CACHE_HOME/laconic, else $HOME/.cache/laconic; nullopt when off or there is no home.
std::optional<std::filesystem::path> decoded_cache_dir();

/// The split stored under `key` in `dir`, mapped copy-on-write with its pages populated; nullopt
/// when there is none, or the file is another key's, truncated or unreadable.
std::optional<DataSplit> load_decoded_split(const std::filesystem::path& dir, const std::string& key);

/// Stores `split` under `key` in `dir` (a temporary file renamed over the old one, so a reader
/// never sees half a file). Returns false, and leaves nothing behind, when it cannot be written.
bool store_decoded_split(const std::filesystem::path& dir, const std::string& key, const DataSplit& split);

/// The split under `key` from the cache folder, else `decode()`, stored for the next run.
DataSplit decoded_split(const std::string& key, const std::function<DataSplit()>& decode);

}  // namespace laconic::train
