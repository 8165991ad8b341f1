#pragma once
// `--where key=value` conditions on runs: matched against the swept variables first, then the
// resolved configuration JSON, then the runs' final metrics. Filtering happens in C++ on parsed
// JSON, so user text never reaches SQL.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/queries.hpp"

namespace laconic::storage {

/// How a condition compares: =, !=, <, <=, >, >=.
enum class WhereOp { Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual };

/// One condition, as the user wrote it: `key=value`, `key!=value`, or an ordering of numbers
/// (`key<value`, `key<=value`, `key>value`, `key>=value`).
struct WhereCondition {
  std::string key;    ///< "compressor", "ratio", "optimizer.lr", "workers", "test_accuracy", ...
  std::string value;  ///< "topk", "0.01", "1e-2", "true", ...
  WhereOp op = WhereOp::Equal;
  /// As written back: "ratio<=0.01".
  std::string text() const;
};

/// Parses "key OP value", split at the first operator character (= ! < >); both sides trimmed
/// of spaces. ConfigError when there is no operator, either side is empty, or an ordering has a
/// value that is not a number.
WhereCondition parse_where(const std::string& text);

/// A run's final value of a metric (its run_summary `last`), or nullopt when the run did not
/// record `key`. Used by filter_where for keys that are neither swept nor in the config.
using FinalMetric = std::function<std::optional<double>(const std::string& key, std::int64_t run_id)>;

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
/// for true/false, else as exact text. Orderings (<, <=, >, >=) hold only between numbers.
WhereLookup match_where(const WhereCondition& condition, const nlohmann::json& swept, const nlohmann::json& config);

/// Keeps the runs that satisfy every condition (AND). A key found neither among a run's swept
/// variables nor in its config is looked up with `final_metric` (when given): the run's final
/// value of that metric (a NaN never satisfies a condition). ConfigError when a condition's key
/// exists for none of `runs`, naming it and listing the swept variables that do exist.
std::vector<RunRow> filter_where(const std::vector<RunRow>& runs, const std::vector<WhereCondition>& conditions,
                                 const FinalMetric& final_metric = {});

/// The runs of `db` that `filter` selects and that satisfy every condition (parsed with
/// parse_where), a key neither swept nor configured looked up as the run's final value of that
/// metric (run_summary's `last`). What `laconic runs --where` and the UI's runs page
/// (/api/runs/matching) both ask, so that one grammar with one set of rules filters both.
std::vector<RunRow> runs_where(Database& db, const RunFilter& filter, const std::vector<std::string>& conditions);

/// The conditions of a comma-separated list ("compressor=topk, test_accuracy>0.8"), as the UI's
/// where box takes them; each trimmed, empty ones dropped.
std::vector<std::string> split_where_list(const std::string& text);

/// Flattens a JSON object into "a.b.c" -> leaf value (arrays are leaves), in key order.
std::vector<std::pair<std::string, nlohmann::json>> flatten_json(const nlohmann::json& object);

}  // namespace laconic::storage
