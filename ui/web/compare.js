// Runs side by side: the configuration keys in which they differ (all of them on request), and
// one metric's curves overlaid against the step, the time or the bytes sent, on a linear or log
// axis, smoothed or not (the raw curve kept faint); the seeds of a configuration drawn as their
// mean with a band of one standard deviation, one legend entry each, as the server groups them
// (/api/compare).
import { el, clear, number, route, setParams, api, command, flatten, link, put, add } from "./util.js";
import { chart, color, smooth } from "./charts.js";
import { onChange } from "./live.js";
import { xAxes, xOrStep } from "./xaxes.js";

// The x axis (ui/web/xaxes.js): the step, or the time (measured or derived, projected) or bytes
// sent by worker 0, placed at each step's mean over a configuration's seeds.

export async function comparePage(main) {
  const { params } = route();
  const ids = (params.get("runs") || "").split(",").filter(Boolean).map(Number);
  const state = {
    key: params.get("key") || "test_accuracy", all: params.get("all") === "1", bands: params.get("bands") !== "0",
    x: params.get("x"), log: params.get("log") === "1",
    smooth: Math.min(0.99, Math.max(0, Number(params.get("smooth") || 0))),
  };
  add(main, el("h1", {}, `Compare ${ids.length} runs`));
  if (ids.length < 2) {
    add(main, el("p", {}, "Select two or more runs on the ", el("a", { href: "#/runs" }, "runs page"), "."));
    return null;
  }
  let runs = await Promise.all(ids.map((id) => api(`/api/runs/${id}`)));
  const X_AXES = xAxes(runs, { epoch: false });
  state.x = xOrStep(state.x, X_AXES);
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.summary)))].sort();
  const diffBox = el("div");
  const chartBox = el("div");
  const save = () => {
    const p = new URLSearchParams({ runs: ids.join(","), key: state.key, all: state.all ? "1" : "0", bands: state.bands ? "1" : "0" });
    if (state.x !== "step") p.set("x", state.x);
    if (state.log) p.set("log", "1");
    if (state.smooth) p.set("smooth", String(state.smooth));
    setParams(p);
  };
  const smoothing = el("span", { class: "muted" });
  add(main,
    el("div", { class: "bar" }, el("label", {}, el("input", { type: "checkbox", checked: state.all, onchange: (e) => { state.all = e.target.checked; drawDiff(); } }), "show every key, not only those that differ")),
    diffBox,
    el("div", { class: "bar" },
      el("label", {}, "metric"), el("select", { id: "compare-key", onchange: (e) => { state.key = e.target.value; drawCurves(); } },
        keys.map((k) => el("option", { value: k, selected: k === state.key }, k))),
      el("label", {}, "x"), el("select", { id: "compare-x", onchange: (e) => { state.x = e.target.value; drawCurves(); } },
        Object.keys(X_AXES).map((k) => el("option", { value: k, selected: k === state.x }, k))),
      el("label", {}, el("input", { type: "checkbox", id: "compare-log", checked: state.log, onchange: (e) => { state.log = e.target.checked; drawCurves(); } }), "log y"),
      el("label", {}, "smoothing"), el("input", { type: "range", id: "compare-smooth", min: 0, max: 0.99, step: 0.01, value: state.smooth,
        onchange: (e) => { state.smooth = Number(e.target.value); drawCurves(); } }), smoothing,
      el("label", {}, el("input", { type: "checkbox", checked: state.bands, onchange: (e) => { state.bands = e.target.checked; drawCurves(); } }), "group seeds: mean ± std")),
    chartBox, command("laconic", "compare", ...ids.map(String), "--diff-only"));

  function drawDiff() {
    save();
    // The swept variables repeat what the configuration says.
    const flat = runs.map((r) => {
      const { swept, ...config } = r.config;
      return flatten(config);
    });
    const paths = [...new Set(flat.flatMap((f) => Object.keys(f)))].sort();
    const rows = paths.map((p) => ({ path: p, values: flat.map((f) => (p in f ? f[p] : "-")) }))
      .map((r) => ({ ...r, differs: r.values.some((v) => JSON.stringify(v) !== JSON.stringify(r.values[0])) }))
      .filter((r) => state.all || r.differs);
    // Scrolls inside its box, the key column pinned: the page never scrolls sideways.
    put(diffBox, el("div", { class: "section-table diff-box" }, el("table", { class: "diff" },
      el("tr", {}, el("th", {}, "key"), runs.map((r) => el("th", {}, el("a", { href: link("run", r.id) }, `run ${r.id}`)))),
      rows.map((r) => el("tr", { "data-key": r.path }, el("td", {}, r.path),
        r.values.map((v) => el("td", { class: r.differs ? "changed" : "" }, typeof v === "number" ? number(v) : String(v))))))),
      el("p", { class: "muted" }, `${rows.filter((r) => r.differs).length} keys differ`));
  }

  async function drawCurves() {
    save();
    const p = new URLSearchParams({ runs: ids.join(","), key: state.key, x: state.x, bands: state.bands ? "1" : "0", points: "800" });
    const { curves } = await api(`/api/compare?${p}`);
    smoothing.textContent = state.smooth ? `EMA weight ${state.smooth}` : "off";
    clear(chartBox);
    chart(chartBox, { title: state.key + (state.smooth ? ` (smoothed, weight ${state.smooth})` : ""), xLabel: X_AXES[state.x],
                      yLabel: state.key + (state.log ? " (log scale)" : ""), ...curveLines(curves, state.smooth), log: state.log,
                      xUnit: state.x === "bytes" ? "B" : undefined, name: `compare-${state.key}` });
  }

  drawDiff();
  await drawCurves();
  return onChange(async () => {
    runs = await Promise.all(ids.map((id) => api(`/api/runs/${id}`)));
    await drawCurves();
  });
}

// The server's curves (/api/compare: per configuration its mean over seeds and their standard
// deviation at each x) on one x grid: uPlot's data and lines, each mean smoothed by `weight` with
// its raw curve kept faint, and a band of one standard deviation where there are several seeds.
function curveLines(curves, weight) {
  const xs = [...new Set(curves.flatMap((c) => c.x))].sort((a, b) => a - b);
  const data = [xs];
  const lines = [];
  curves.forEach((c, gi) => {
    const at = new Map(c.x.map((x, j) => [x, j]));
    const column = (f) => xs.map((x) => (at.has(x) ? f(at.get(x)) : null));
    const raw = column((j) => c.mean[j]);
    const col = color(gi);
    if (weight) {  // the raw curve stays, faint, as TensorBoard keeps it
      data.push(raw);
      lines.push({ label: `${c.label} (raw)`, color: col + "55", quiet: true, faint: true, role: "raw" });
    }
    data.push(smooth(raw, weight));
    lines.push({ label: c.n > 1 ? `${c.label} (mean of n=${c.n}) ± std` : c.label, color: col, role: "curve" });
    if (c.n > 1) {
      data.push(column((j) => c.mean[j] + c.sd[j]), column((j) => c.mean[j] - c.sd[j]));
      const upper = data.length - 2, lower = data.length - 1;
      lines.push({ label: `${c.label} +std`, color: col, band: [upper, lower], quiet: true, role: "band" },
                 { label: `${c.label} -std`, color: col, quiet: true, role: "band" });
    }
  });
  return { data, lines };
}
