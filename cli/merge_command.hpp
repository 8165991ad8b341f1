#pragma once
// `laconic merge OUT.db IN.db...`: the shards of a sweep (`laconic run --shard I/N`) gathered into
// one database (storage/merge.hpp; docs/multi-host.md).
#include <string>
#include <vector>

namespace laconic::cli {

/// Merges each of `sources` into `target` (created when missing), printing what each added and
/// every run it did not add or added beside another. Exit 0; ConfigError (exit 2) for a missing
/// source or a source that is the target.
int merge_command(const std::string& target, const std::vector<std::string>& sources);

}  // namespace laconic::cli
