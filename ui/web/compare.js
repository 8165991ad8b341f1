// Runs side by side: the configuration keys in which they differ (all of them on request), and
// one metric's curves overlaid; the seeds of a configuration drawn as their mean with a band of
// one standard deviation and their count.
import { el, clear, number, route, setParams, api, command, flatten, link, put, add } from "./util.js";
import { chart, color } from "./charts.js";
import { onChange } from "./live.js";

export async function comparePage(main) {
  const { params } = route();
  const ids = (params.get("runs") || "").split(",").filter(Boolean).map(Number);
  const state = { key: params.get("key") || "test_accuracy", all: params.get("all") === "1", bands: params.get("bands") !== "0" };
  add(main, el("h1", {}, `Compare ${ids.length} runs`));
  if (ids.length < 2) {
    add(main, el("p", {}, "Select two or more runs on the ", el("a", { href: "#/runs" }, "runs page"), "."));
    return null;
  }
  let runs = await Promise.all(ids.map((id) => api(`/api/runs/${id}`)));
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.summary)))].sort();
  const diffBox = el("div");
  const chartBox = el("div");
  const save = () => setParams(new URLSearchParams({ runs: ids.join(","), key: state.key, all: state.all ? "1" : "0", bands: state.bands ? "1" : "0" }));
  add(main, 
    el("div", { class: "bar" }, el("label", {}, el("input", { type: "checkbox", checked: state.all, onchange: (e) => { state.all = e.target.checked; drawDiff(); } }), "show every key, not only those that differ")),
    diffBox,
    el("div", { class: "bar" },
      el("label", {}, "metric"), el("select", { onchange: (e) => { state.key = e.target.value; drawCurves(); } },
        keys.map((k) => el("option", { value: k, selected: k === state.key }, k))),
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
    put(diffBox, el("table", { class: "diff" },
      el("tr", {}, el("th", {}, "key"), runs.map((r) => el("th", {}, el("a", { href: link("run", r.id) }, `run ${r.id}`)))),
      rows.map((r) => el("tr", { "data-key": r.path }, el("td", {}, r.path),
        r.values.map((v) => el("td", { class: r.differs ? "changed" : "" }, typeof v === "number" ? number(v) : String(v)))))),
      el("p", { class: "muted" }, `${rows.filter((r) => r.differs).length} keys differ`));
  }

  async function drawCurves() {
    save();
    const all = await Promise.all(runs.map((r) => api(`/api/runs/${r.id}/series?key=${encodeURIComponent(state.key)}&worker=0&points=800`)));
    const groups = new Map();
    runs.forEach((r, i) => {
      const k = state.bands ? r.configuration : String(r.id);  // the run less its seed, as the server keys it
      if (!groups.has(k)) groups.set(k, { label: state.bands ? r.configuration_label : `run ${r.id}: ${r.name}`, series: [] });
      groups.get(k).series.push(all[i]);
    });
    const steps = [...new Set(all.flatMap((s) => s.step))].sort((a, b) => a - b);
    const data = [steps];
    const lines = [];
    [...groups.values()].forEach((g, gi) => {
      const at = g.series.map((s) => new Map(s.step.map((x, j) => [x, s.value[j]])));
      const mean = [], lo = [], hi = [];
      for (const x of steps) {
        const vs = at.map((m) => m.get(x)).filter((v) => v !== undefined && v !== null);
        if (!vs.length) { mean.push(null); lo.push(null); hi.push(null); continue; }
        const m = vs.reduce((a, b) => a + b, 0) / vs.length;
        const sd = vs.length > 1 ? Math.sqrt(vs.reduce((a, b) => a + (b - m) ** 2, 0) / (vs.length - 1)) : 0;
        mean.push(m); lo.push(m - sd); hi.push(m + sd);
      }
      const n = g.series.length;
      data.push(mean);
      lines.push({ label: n > 1 ? `${g.label} (mean of n=${n})` : g.label, color: color(gi) });
      if (n > 1) {
        data.push(hi, lo);
        const upper = data.length - 2, lower = data.length - 1;
        lines.push({ label: `${g.label} +std`, color: color(gi), band: [upper, lower], quiet: true },
                   { label: `${g.label} -std`, color: color(gi), quiet: true });
      }
    });
    clear(chartBox);
    chart(chartBox, { title: state.key, xLabel: "step", yLabel: state.key, data, lines, name: `compare-${state.key}` });
  }

  drawDiff();
  await drawCurves();
  return onChange(async () => {
    runs = await Promise.all(ids.map((id) => api(`/api/runs/${id}`)));
    await drawCurves();
  });
}
