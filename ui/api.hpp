#pragma once
// The JSON the browser reads (docs/ui.md, "API"), built from a read-only connection: one
// function per endpoint, so that each can be tested without a server. Nothing here writes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/database.hpp"
#include "ui/series.hpp"

namespace laconic::ui {

/// A number as JSON, which has no NaN or infinity: those (a value not measured) become null.
nlohmann::json number_or_null(double value);

/// GET /api/runs: every run as `laconic runs --format json` lists it, its swept variables as an
/// object, its tags, and whether a RUNNING run is stale; with `since` (unix seconds), only the
/// runs planned, started, beating or ended since (what a page that has the rest fetches), and
/// `now` to ask with next.
nlohmann::json runs_json(storage::Database& db, std::optional<double> since = std::nullopt);
/// What the runs page's status filter offers, served with every list of runs (`statuses`): each
/// status in the order of the life cycle, with "stale" (RUNNING, but nobody runs it) after RUNNING.
nlohmann::json status_choices();
/// GET /api/runs?newest=N: the N runs of highest id (as runs_json lists them), `total` (every
/// run) and `now`: what the runs page draws first, before the whole list has come.
nlohmann::json newest_runs_json(storage::Database& db, std::int64_t count);
/// runs_json(db) as its JSON text, written run by run (what GET /api/runs serves: the same
/// objects, without holding every run's at once).
std::string runs_json_text(storage::Database& db);

/// GET /api/runs/matching?where=TEXT: the ids of the runs that satisfy every comma-separated
/// condition of TEXT, by `laconic runs --where`'s rules (storage::runs_where), and the
/// conditions as read; ConfigError (a 400) for a condition that cannot be read or a key that no
/// run has.
nlohmann::json runs_matching_json(storage::Database& db, const std::string& where);

/// GET /api/runs/ID: the run, its resolved configuration (an object), facts, note, error, the
/// summary of every metric it recorded and its per-epoch rows; ConfigError when there is none.
nlohmann::json run_json(storage::Database& db, std::int64_t run_id);

/// GET /api/runs/ID/step_time: the mean seconds of each part of a step (compute, compress,
/// wait, communicate measured and projected, hidden behind backward) per worker rank, and whether
/// the run's ranks were threads (their times derived and projected).
nlohmann::json step_time_json(storage::Database& db, std::int64_t run_id);

/// What a series request asks for (GET /api/runs/ID/series?key=K&worker=W&...).
struct SeriesQuery {
  std::string key;
  int worker = 0;
  std::optional<std::int64_t> after_step;  ///< only the points after this step (live updates)
  std::optional<std::int64_t> from, to;    ///< the step range on screen (a zoom)
  std::size_t buckets = 1000;              ///< about the chart's width in pixels
  bool bytes = false;                      ///< also each point's bytes sent so far (an x axis)
  bool projected = false;                  ///< also each point's projected seconds so far (an x axis)
};

/// A series as read for a request: its points, downsampled; how many there were before; the last
/// step (-1 for none).
struct SeriesRead {
  std::vector<SeriesPoint> points;
  std::size_t total = 0;
  std::int64_t last_step = -1;
};

/// The points series_json serves, before they are written as JSON.
SeriesRead read_series(storage::Database& db, std::int64_t run_id, const SeriesQuery& query);

/// The series of one metric of one worker: [step, value, wall] points (and with `bytes`, the
/// bytes the worker sent up to each step; with `projected`, the seconds its steps took up to it
/// projected onto the run's link, `projected_time_step`; both summed before downsampling, 0
/// before the first record), downsampled by min and
/// max per bucket (ui/series.hpp) when there are more than 2 x buckets, with the count there
/// was and the last step.
nlohmann::json series_json(storage::Database& db, std::int64_t run_id, const SeriesQuery& query);

/// The x axis of a comparison (the compare page's "x"): the step, the seconds since the run
/// started, the bytes sent, the seconds projected onto the run's link.
enum class CompareX { Step, Wall, Bytes, Projected };

/// What a comparison asks for (GET /api/compare?runs=1,2&key=K&x=step|wall|bytes|projected&bands=1&points=N).
struct CompareQuery {
  std::vector<std::int64_t> runs;
  std::string key;
  CompareX x = CompareX::Step;
  bool bands = true;          ///< group each configuration's seeds (mean and standard deviation)
  std::size_t buckets = 800;  ///< each run's series downsampled to about this many points
};

/// One metric of worker 0 of each run, grouped by configuration (the run less its seed,
/// storage::configuration_key) when `bands`, else one group per run: per group its label, its
/// runs' count `n`, and at every step any run recorded the mean over its runs (`mean`), their
/// sample standard deviation (`sd`, 0 for one run) and the x it is drawn at (`x`: the step, or the
/// mean over its runs of the axis there), each run's series downsampled first as series_json does.
nlohmann::json compare_json(storage::Database& db, const CompareQuery& query);

/// GET /api/experiments: each experiment with its runs counted by status.
nlohmann::json experiments_json(storage::Database& db);

/// GET /api/experiments/NAME: the report's model of the experiment's finished runs: its
/// sections' tables (as `laconic report` writes them), and per configuration the numbers the
/// page draws: final metric, bytes, compression, the parts of a step measured and projected,
/// whether it is on the Pareto front of metric against bytes sent, and its time to target
/// against dense on links from 10 Mbit/s to 100 Gbit/s. `target` sets the threshold of "time to
/// target" for every row, as `laconic report --target` does (unset: each row's best dense less
/// the tolerance). When the runs name a hardware profile (`hardware = profile { file = ... }`),
/// `hardware` says which (else null), the report's projection onto it is among the sections, and
/// each configuration's `scan_there` is its scan with the steps projected onto that hardware; a
/// profile that cannot be read is `hardware.error`, the rest of the page as without one.
/// ConfigError when it has no runs.
nlohmann::json experiment_json(storage::Database& db, const std::string& name,
                               std::optional<double> target = std::nullopt);

}  // namespace laconic::ui
