// The x axes a run's curves are drawn against, each named as what it is: the step, the epoch,
// the time since the run started (measured where each rank had a core of its own; derived for
// thread ranks, whose clock is their CPU time and their waits for one another), that time as the
// run's steps would take it on its link (projected from what it sent, `projected_time_step`), or
// the bytes sent. One place for every page that draws curves.

const WALL = {
  wall: "measured",
  thread_cpu: "derived (thread ranks)",
  mixed: "measured (thread ranks: derived)",
};

/** The axes every run of `runs` can be drawn against, {name: label}; `epoch` too when asked;
 * `short` labels for small panels ("seconds, measured" for "seconds since the run started, ..."). */
export function xAxes(runs, { epoch = true, short = false } = {}) {
  const clocks = new Set(runs.map((r) => (r.facts?.rank_clock === "thread_cpu" ? "thread_cpu" : "wall")));
  const seconds = short ? "seconds" : "seconds since the run started";
  const axes = { step: "step" };
  if (epoch) axes.epoch = "epoch";
  axes.wall = `${seconds}, ${WALL[clocks.size > 1 ? "mixed" : [...clocks][0] ?? "wall"]}`;
  if (runs.length && runs.every((r) => r.summary && "projected_time_step" in r.summary))
    axes.projected = `${seconds}, projected onto its link`;
  axes.bytes = "bytes sent";
  return axes;
}

/** `x` when the runs have that axis, else the step. */
export function xOrStep(x, axes) {
  return x && axes[x] ? x : "step";
}

/** What a series request (/api/runs/ID/series) adds for axis `x`. */
export function xQuery(x) {
  return x === "bytes" ? "&bytes=1" : x === "projected" ? "&projected=1" : "";
}

/** The x of each point of `series` (a series request's answer) on axis `x`, for run `run`. */
export function xOf(x, series, run) {
  if (x === "wall") return series.wall;
  if (x === "bytes") return series.bytes;
  if (x === "projected") return series.projected;
  if (x === "epoch") return series.step.map((t) => (t + 1) / Math.max(1, run.steps_per_epoch));
  return series.step;
}
