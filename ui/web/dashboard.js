// A run at a glance: a small chart of every metric it recorded, grouped (loss and accuracy, time
// measured, time projected, bytes and messages, ...), each titled with its unit; up to four
// workers overlaid; one x axis for all (ui/web/xaxes.js: step, epoch, time measured or derived,
// time projected, bytes sent) and one cursor shared by every panel. A panel's title picks its
// metric for the big chart below.
import { el, api, add, clear } from "./util.js";
import { chart, color } from "./charts.js";
import { xAxes, xOf, xQuery } from "./xaxes.js";

const GROUPS = [
  ["Loss and accuracy", (k) => /loss|accuracy|perplexity/.test(k)],
  ["Time per step, measured", (k) => /^time_|^epoch_time$/.test(k)],
  ["Time per step, projected onto the run's link", (k) => /^projected_/.test(k)],
  ["Bytes and messages", (k) => /bytes|messages/.test(k)],
  ["Learning rate and the exchange", (k) => /^lr$|staleness|update_lag|consensus|decoded/.test(k)],
  ["Other", () => true],
];
const MAX_WORKERS = 4;
// Why a thread-rank run's derived and projected panels look alike.
const DERIVED_NOTE = "Ranks as threads: each step's time is derived (compute and compress each thread's CPU time, " +
  "communicate projected onto the run's link), so these panels and the projected ones below show nearly the same " +
  "times; neither is a wall-clock measurement (docs/network-model.md).";

function groupOf(key) {
  return GROUPS.findIndex(([, test]) => test(key));
}

/** Draws the panels into `box`; `pick(key)` is called when a panel's title is clicked. */
export async function dashboard(box, run, x, pick) {
  const keys = Object.keys(run.summary).sort();
  const workers = Math.min(MAX_WORKERS, Math.max(1, run.config.workers ?? 1));
  const extra = xQuery(x);
  const fetched = await Promise.all(keys.map((key) => Promise.all(Array.from({ length: workers }, (_, w) =>
    api(`/api/runs/${run.id}/series?key=${encodeURIComponent(key)}&worker=${w}&points=300${extra}`)))));
  clear(box);
  add(box, el("p", { class: "legend muted" }, "Workers: ", Array.from({ length: workers }, (_, w) => {
    const swatch = el("span");
    swatch.style.background = color(w);
    return [swatch, `worker ${w}`];
  }), run.config.workers > MAX_WORKERS ? ` (the first ${MAX_WORKERS} of ${run.config.workers})` : ""));
  // A thread rank's times are on its derived clock, not measured on a core of its own.
  const derived = run.facts?.rank_clock === "thread_cpu";
  const sections = GROUPS.map(([title]) => ({
    title: derived ? title.replace("Time per step, measured", "Time per step, derived (thread ranks)") : title,
    note: derived && title.startsWith("Time per step, measured") ? DERIVED_NOTE : null,
    panels: [] }));
  keys.forEach((key, i) => sections[groupOf(key)].panels.push({ key, series: fetched[i] }));
  for (const section of sections.filter((s) => s.panels.length)) {
    const grid = el("div", { class: "panels" });
    add(box, el("h3", {}, section.title), section.note ? el("p", { class: "muted clock-note" }, section.note) : null, grid);
    for (const { key, series } of section.panels) drawPanel(grid, run, key, series, x, pick);
  }
}

function drawPanel(grid, run, key, series, x, pick) {
  const unit = run.units?.[key];
  const panel = el("div", { class: "panel", "data-key": key });
  add(grid, panel);
  const shown = series.filter((s) => s.step.length);  // the workers that recorded it
  const xs = [...new Set(shown.flatMap((s) => xOf(x, s, run).filter((v) => v !== null)))].sort((a, b) => a - b);
  const data = [xs, ...shown.map((s) => {
    const at = new Map(xOf(x, s, run).map((v, j) => [v, s.value[j]]));
    return xs.map((v) => (at.has(v) ? at.get(v) : null));
  })];
  const lines = shown.map((s, w) => ({ label: `worker ${series.indexOf(s)}`, color: color(w) }));
  const title = el("a", { href: "#", class: "panel-title", onclick: (e) => { e.preventDefault(); pick(key); } },
    key, unit ? ` (${unit})` : "");
  add(panel, title);
  if (!xs.length) return add(panel, el("p", { class: "muted" }, "no points"));
  chart(panel, { title: "", xLabel: xAxes([run], { short: true })[x], yLabel: unit || key, data, lines, width: 360, height: 170,
                 sync: `run-${run.id}`, xUnit: x === "bytes" ? "B" : undefined, downloads: false, legend: false });
}
