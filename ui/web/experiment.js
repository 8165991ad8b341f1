// The experiments, and one experiment as its report says it, interactive: the final metric
// against the bytes sent with the Pareto front marked, where a step's time goes (measured and
// projected), and "Does it pay off?" at a bandwidth a slider moves, with each configuration's
// break-even, on this machine's steps or on those of the hardware profile the runs name. The numbers are the report's (ui/experiment_api.cpp); the page only draws them.
import { el, clear, number, bytes, route, setParams, api, command, link, download, csv, add, put } from "./util.js";
import { chart, color, stackedBars } from "./charts.js";
import { onChange } from "./live.js";
import { parallelCoordinates, fieldScatters, sweptFields } from "./parallel.js";

// The brush of the parallel coordinates in the URL: "compressor:0.5-1;compressor.ratio:0-0.3".
function brushOf(text) {
  const out = {};
  for (const part of (text || "").split(";").filter(Boolean)) {
    const at = part.lastIndexOf(":");
    const [lo, hi] = part.slice(at + 1).split("-").map(Number);
    if (at > 0 && Number.isFinite(lo) && Number.isFinite(hi)) out[part.slice(0, at)] = [lo, hi];
  }
  return out;
}
const brushText = (brush) => Object.entries(brush).map(([k, [lo, hi]]) => `${k}:${lo.toFixed(3)}-${hi.toFixed(3)}`).join(";");

export async function experimentsPage(main) {
  const list = await api("/api/experiments");
  add(main, el("h1", {}, "Experiments"),
    el("table", {}, el("tr", {}, el("th", {}, "experiment"), el("th", { class: "num" }, "runs"), el("th", {}, "statuses")),
      list.map((e) => el("tr", {},
        el("td", {}, el("a", { href: link("experiment", e.name) }, e.name)),
        el("td", { class: "num" }, e.runs),
        el("td", {}, Object.entries(e.statuses).map(([s, n]) => `${s} ${n}`).join(", "))))),
    command("laconic", "runs"));
  return onChange(() => window.dispatchEvent(new HashChangeEvent("hashchange")));
}

// A paragraph of a section's lead, or its list, as the report's HTML shows it.
function leadBlock(block) {
  return block.items ? el("ul", {}, ...block.items.map((item) => el("li", {}, item))) : el("p", {}, block.text);
}

// What a table's row is about, as the server says (a configuration's id, a run's id), for the
// brush to filter by.
function rowSubject(t, j) {
  return { "data-configuration": t.row_configurations?.[j], "data-run": t.row_runs?.[j] };  // null: not set
}

function tableOf(t) {
  const box = el("div", { class: "section-table" });
  const table = el("table", {},
    el("tr", {}, t.columns.map((c) => el("th", { class: c.right ? "num" : "" }, c.header))),
    t.rows.map((r, j) => el("tr", rowSubject(t, j), r.map((v, i) => el("td", { class: t.columns[i].right ? "num" : "" }, v)))));
  add(box, table, el("button", { onclick: () => download(`${t.slug}.csv`, csv(t.csv_header.length ? t.csv_header : t.columns.map((c) => c.header), t.csv_header.length ? t.csv_rows : t.rows)) }, "CSV"));
  return box;
}

export async function experimentPage(main) {
  const { arg, params } = route();
  const name = arg;
  // The target of "time to target": the report's default (each row's baseline less the
  // tolerance) unless the user sets one; every table and projection follows it.
  // `on`: "there" draws "Does it pay off?" with the steps projected onto the hardware profile the
  // runs name (hardware = profile { ... }), "here" with this machine's.
  const state = { bw: Number(params.get("bw") || 1e9), target: params.get("target") || "", on: params.get("on") || "here",
                  brush: brushOf(params.get("brush")) };
  const fetchModel = () => api(`/api/experiments/${encodeURIComponent(name)}` + (state.target ? `?target=${encodeURIComponent(state.target)}` : ""));
  let e = await fetchModel();
  // What the page's parts share: its name and state, the model on screen, and how to redraw it.
  const page = { name, state, model: () => e, draw: () => draw(), refetch: async () => { e = await fetchModel(); } };
  const body = el("div");
  add(main, el("h1", {}, "Experiment ", name), el("div", { class: "bar" },
    el("a", { href: link("runs", "", { experiment: name }) }, "its runs"), command("laconic", "report", name)), body);

  function draw() {
    const p = new URLSearchParams({ bw: String(state.bw) });
    if (state.target) p.set("target", state.target);
    if (state.on !== "here") p.set("on", state.on);
    if (Object.keys(state.brush).length) p.set("brush", brushText(state.brush));
    setParams(p);
    clear(body);
    const metric = e.metric;
    const configs = e.configurations;
    if (!configs.length) {
      add(body, el("p", {}, "No run of it has finished yet."));
      return;
    }
    // The answer, and every other section's tables, as the report has them.
    let kept = null;  // the configurations inside the sweep's brush (null: no sweep view)
    for (const s of e.sections) {
      const section = el("section", { id: s.anchor }, el("h2", {}, s.heading), ...s.lead_blocks.map(leadBlock));
      if (s.anchor === "answer" || s.anchor === "advice") add(section, s.tables.map(tableOf));
      else if (s.anchor === "time-and-bytes-to-target") add(section, targetInput(page, configs), s.tables.map(tableOf));
      else add(section, el("details", {}, el("summary", {}, "tables and how they are computed"), el("p", { class: "muted" }, s.text), ...s.tables.map(tableOf)));
      add(body, section);
      if (s.anchor === "answer") {
        kept = drawSweep(page, body, metric, configs);
        drawInteractive(page, body, metric, kept ? configs.filter((c) => kept.has(c.id)) : configs);
      }
    }
    if (kept) filterTables(body, configs, kept);
  }

  draw();
  return onChange(async () => {
    e = await fetchModel();
    draw();
  });
}

// The sweep seen through: parallel coordinates (a drag along an axis brushes it) and a scatter
// per swept field; nothing for an experiment that sweeps one configuration.
function drawSweep(page, into, metric, configs) {
  const { state, name } = page;
  if (!sweptFields(configs).length) return null;
  const box = el("section", { id: "sweep" }, el("h2", {}, "The sweep: swept fields against the final metric"),
    el("p", { class: "muted" }, "One line per configuration (mean over its seeds). Drag along an axis to keep the configurations in that range; the tables and charts below follow; a click on an axis clears its brush."));
  add(into, box);
  const kept = parallelCoordinates(box, configs, metric, state.brush, (brush) => { state.brush = brush; page.draw(); });
  add(box, el("p", { class: "muted", id: "sweep-kept" }, `${kept.size} of ${configs.length} configurations kept`));
  const scatters = el("div", { class: "panels" });
  add(box, scatters);
  fieldScatters(scatters, configs.filter((c) => kept.has(c.id)), metric, name);
  return kept;
}

// Rows of the report's tables about a configuration the brush left out, or one of its runs (the
// table of runs), are hidden: by the ids the server gives each row, never by the row's text.
function filterTables(into, configs, kept) {
  const configurationOfRun = new Map(configs.flatMap((c) => c.runs.map((run) => [run, c.id])));
  for (const tr of into.querySelectorAll(".section-table tr")) {
    const id = tr.dataset.configuration !== undefined ? Number(tr.dataset.configuration)
      : tr.dataset.run !== undefined ? configurationOfRun.get(Number(tr.dataset.run)) : undefined;
    if (id !== undefined) tr.hidden = !kept.has(id);
  }
}

function targetInput(page, configs) {
  const { state, name } = page;
  const input = el("input", { type: "number", step: "any", value: state.target, placeholder: number(configs[0].target),
    onchange: async (ev) => {
      const previous = state.target;
      state.target = ev.target.value;
      try {
        await page.refetch();
        page.draw();
      } catch (error) {
        state.target = previous;
        put(problem, String(error.message || error));
      }
    } });
  const problem = el("span", { class: "error" });
  return el("div", { class: "bar" }, el("label", {}, `target ${page.model().metric.label} (empty: the report's)`), input, problem,
    command("laconic", "report", name, ...(state.target ? ["--target", state.target] : [])));
}

function drawInteractive(page, box, metric, configs) {
  paretoChart(page.name, box, metric, configs);
  stepBars(box, configs);
  paysOff(page, box, configs);
}

// Metric against bytes sent; the Pareto front joined.
function paretoChart(name, box, metric, configs) {
  add(box, el("h2", {}, `${metric.label} against bytes sent`));
  const points = configs.filter((c) => c.final.mean !== null && c.bytes_sent !== null);
  const front = points.filter((c) => c.pareto).sort((a, b) => a.bytes_sent - b.bytes_sent);
  const xs = [...new Set(points.map((c) => c.bytes_sent))].sort((a, b) => a - b);
  const data = [xs];
  const lines = [];
  points.forEach((c, i) => {
    data.push(xs.map((x) => (x === c.bytes_sent ? c.final.mean : null)));
    lines.push({ label: c.label + (c.pareto ? " (Pareto)" : ""), points: true, color: color(i) });
  });
  data.push(xs.map((x) => front.find((c) => c.bytes_sent === x)?.final.mean ?? null));
  lines.push({ label: "Pareto front", color: "#000000" });
  chart(box, { title: `${metric.label} against bytes sent (mean over seeds)`, xLabel: "bytes sent per run (log scale)",
               yLabel: metric.label, data, lines, log: false, logX: xs.length > 0 && xs[0] > 0, xUnit: "B", name: `${name}-pareto` });
  add(box, el("p", { class: "muted" }, "On the Pareto front (no configuration is better on both): ", front.map((c) => c.label).join("; ") || "-"));

}

// Where a step's time goes, measured and projected.
function stepBars(box, configs) {
  add(box, el("h2", {}, "Time per step: measured and projected"));
  const rows = configs.flatMap((c) => [
    { label: `${c.label}, measured`, parts: { compute: c.step.compute, compress: c.step.compress, wait: c.step.wait, communicate: c.step.communicate_measured } },
    { label: `${c.label}, projected`, parts: { compute: c.step.compute, compress: c.step.compress, wait: c.step.wait, communicate: c.step.communicate_projected } }]);
  stackedBars(box, rows, ["compute", "compress", "wait", "communicate"], ["#4c78a8", "#f58518", "#bab0ac", "#54a24b"]);
  // The report's "compute share": compute over the step, projected where the runs were.
  add(box, el("p", { class: "muted utilization" }, "Compute utilization (compute / step, projected where projected): ",
    configs.map((c) => `${c.label} ${c.step.compute_utilization === null ? "-" : Math.round(100 * c.step.compute_utilization) + "%"}`).join("; ")));
  if (configs.some((c) => c.thread_ranks))
    add(box, el("p", { class: "muted" }, "Ranks as threads in ", configs.filter((c) => c.thread_ranks).map((c) => c.label).join("; "),
      ": their compute is CPU time, their wait derived, their communication projected."));
}

// Does it pay off at the bandwidth of the slider, on this machine or on the profile's hardware?
function paysOff(page, box, configs) {
  const { state, name } = page;
  const e = page.model();
  add(box, el("h2", { id: "pays-off" }, "Does it pay off? At a bandwidth of your choice"));
  const hw = e.hardware;
  const there = hw && !hw.error && state.on === "there";
  if (hw && hw.error) add(box, el("p", { class: "error" }, "The runs' hardware profile was not read: ", hw.error));
  if (hw && !hw.error)
    add(box, el("div", { class: "bar" }, el("label", {}, "steps"),
      el("select", { id: "steps-on", onchange: (ev) => { state.on = ev.target.value; page.draw(); } },
        el("option", { value: "here", selected: !there }, "measured on this machine"),
        el("option", { value: "there", selected: there }, `projected onto ${hw.name} (${hw.origin})`)),
      command("laconic", "report", name)));
  const scanOf = (c) => (there ? c.scan_there : c.scan);
  const index = e.bandwidths.reduce((best, b, i) => (Math.abs(Math.log(b / state.bw)) < Math.abs(Math.log(e.bandwidths[best] / state.bw)) ? i : best), 0);
  const readout = el("strong", {}, e.bandwidth_texts[index]);
  const slider = el("input", { type: "range", min: 0, max: e.bandwidths.length - 1, step: 1, value: index,
    oninput: (ev) => { state.bw = e.bandwidths[Number(ev.target.value)]; page.draw(); } });
  const latencies = [...new Set(configs.map((c) => scanOf(c).latency))];
  add(box, el("div", { class: "bar" }, el("label", {}, `link bandwidth (${latencies.length === 1 ? latencies[0] : "each row's latency"} a message, as the runs' own link)`), slider, readout));
  add(box, el("p", { class: "muted" }, "Baseline: ", e.baseline || "none in these runs"));
  add(box, el("div", { class: "section-table" }, el("table", {},
    el("tr", {}, ["configuration", "time to target (projected)", there ? `against the baseline on ${hw.name}` : "against the baseline here", "break-even", "from 10 Mbit/s to 100 Gbit/s"].map((h) => el("th", {}, h))),
    configs.map((c) => el("tr", { "data-label": c.label },
      el("td", {}, c.label),
      el("td", { class: "num" }, scanOf(c).time_text[index]),
      el("td", {}, scanOf(c).versus_text[index]),
      el("td", { class: "num" }, scanOf(c).break_even_text !== null ? scanOf(c).break_even_text
        : scanOf(c).crossover_text !== null ? `${scanOf(c).crossover_text} (point estimates)` : "-"),
      el("td", { class: "muted" }, scanOf(c).text))))));
  // Time to target against bandwidth, the slider's position marked.
  const curves = [e.bandwidths.slice()];
  const curveLines = [];
  configs.forEach((c, i) => { curves.push(scanOf(c).seconds); curveLines.push({ label: c.label, color: color(i) }); });
  curves.push(e.bandwidths.map((b, i) => (i === index ? Math.max(...configs.map((c) => scanOf(c).seconds[i] ?? 0)) : null)));
  curveLines.push({ label: "the slider", points: true, color: "#000000" });
  chart(box, { title: there ? `Time to target against bandwidth (projected onto ${hw.name})` : "Time to target against bandwidth (projected)", xLabel: "link bandwidth (log scale)", yLabel: "seconds (log scale)", data: curves, lines: curveLines, log: true, logX: true, xUnit: "bit/s", name: `${name}-pays-off` });
}

