#pragma once
// Decoded splits kept on disk between runs. Decompressing Fashion-MNIST's gzipped idx files takes
// about 0.4 s of every `laconic run`; mapping a file of the decoded tensors takes a tenth of that.
// A split's file is named after what identifies it (its source files' paths and the decoding's
// parameters) and holds its key (that, plus the files' sizes and modification times), so a
// replaced source file is decoded again and its new split takes the old one's place; a file that
// does not match its key, or is cut short, is ignored and rewritten.
// docs/models-and-data.md, "Decoded data on disk".
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "engine/train/data/dataset.hpp"

namespace laconic::train {

/// The folder of decoded splits: $LACONIC_CACHE_DIR when set ("off" or "" turns the cache off),
/// else $XDG_CACHE_HOME/laconic, else $HOME/.cache/laconic; nullopt when off or there is no home.
std::optional<std::filesystem::path> decoded_cache_dir();

/// Where a split is kept: `name` identifies it (source paths, decoding) and names its file;
/// `key` is what it must match (name plus the source files' versions).
struct SplitKey {
  std::string name;
  std::string key;
};

/// The split stored under `key` in `dir`, mapped read-only with its pages populated; nullopt
/// when there is none, or the file holds another key, is truncated or unreadable.
std::optional<DataSplit> load_decoded_split(const std::filesystem::path& dir, const SplitKey& key);

/// Stores `split` under `key` in `dir`, over any older split of the same name (a temporary
/// file renamed, so a reader never sees half a file). Returns false, and leaves nothing behind,
/// when it cannot be written.
bool store_decoded_split(const std::filesystem::path& dir, const SplitKey& key, const DataSplit& split);

/// The split under `key` from the cache folder, else `decode()`, stored for the next run.
DataSplit decoded_split(const SplitKey& key, const std::function<DataSplit()>& decode);

}  // namespace laconic::train
