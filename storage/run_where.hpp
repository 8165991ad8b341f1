#pragma once
// `--where key=value` conditions on runs: matched against the swept variables first, then the
// resolved configuration JSON. Filtering happens in C++ on parsed JSON, so user text never
// reaches SQL.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/queries.hpp"

namespace laconic::storage {

/// One `key=value` condition, as the user wrote it.
struct WhereCondition {
  std::string key;    ///< "compressor", "ratio", "optimizer.lr", "workers", ...
  std::string value;  ///< "topk", "0.01", "1e-2", "true", ...
};

/// Parses "key=value" (split at the first '='; both sides trimmed of spaces). ConfigError when
/// there is no '=' or either side is empty.
WhereCondition parse_where(const std::string& text);

/// Where a key was looked up in one run, and what it found there.
struct WhereLookup {
  bool found = false;
  bool matched = false;
};

/// Looks `condition` up in one run: `swept` (the swept variables) and `config` (the resolved
/// configuration) as parsed JSON objects. Lookup order, first hit wins:
///  1. a swept variable named exactly `key`;
///  2. swept variables whose last dotted part is `key` ("ratio" finds "compressor.ratio"),
///     matching if any of them matches;
///  3. the config path `key` with dots ("optimizer.lr", "workers"); a component object at that
///     path ("compressor") compares its "name";
///  4. config paths whose last part is `key` ("lr" finds "optimizer.lr"), any of them matching.
/// Values compare as numbers when both sides are numbers (0.01 == 1e-2, 4 == 4.0), as booleans
/// for true/false, else as exact text.
WhereLookup match_where(const WhereCondition& condition, const nlohmann::json& swept, const nlohmann::json& config);

/// Keeps the runs that satisfy every condition (AND). ConfigError when a condition's key exists
/// in none of `runs` (neither swept nor in the config), naming it and listing the swept
/// variables that do exist. `runs` need their config JSON: read with list_runs(db, filter, true).
std::vector<RunRow> filter_where(const std::vector<RunRow>& runs, const std::vector<WhereCondition>& conditions);

/// Flattens a JSON object into "a.b.c" -> leaf value (arrays are leaves), in key order.
std::vector<std::pair<std::string, nlohmann::json>> flatten_json(const nlohmann::json& object);

}  // namespace laconic::storage
