// One run: its configuration and facts, its curves (any metric, per step, epoch, time or bytes
// sent; log scale; smoothing; zoom fetches the finer points), where its steps' time goes, worker
// by worker, and the error of a run that failed. A running run's curves grow as it writes.
import { el, clear, number, bytes, seconds, route, setParams, api, command, flatten, link, download, csv, put, add } from "./util.js";
import { chart, smooth, stackedBars } from "./charts.js";
import { onChange } from "./live.js";
import { dashboard } from "./dashboard.js";
import { xAxes, xOf, xOrStep, xQuery } from "./xaxes.js";

const PARTS = ["compute", "compress", "wait", "communicate"];
const PART_COLORS = ["#4c78a8", "#f58518", "#bab0ac", "#54a24b"];

function keyValueTable(object) {
  return el("table", { class: "kv" },
    Object.entries(object).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, typeof v === "number" ? number(v) : String(v)))));
}

async function series(id, key, worker, extra = "") {
  return api(`/api/runs/${id}/series?key=${encodeURIComponent(key)}&worker=${worker}&points=1200${extra}`);
}

export async function runPage(main) {
  const { arg, params } = route();
  const id = Number(arg);
  let run = await api(`/api/runs/${id}`);
  let keys = Object.keys(run.summary).sort();
  const state = initialState(params, run, keys);
  const save = () => saveState(state);

  const metricSelect = el("select", { onchange: (e) => { state.key = e.target.value; state.from = state.to = null; draw(); } });
  // The metrics it recorded so far: a running run adds some (test_accuracy at its first epoch's end).
  const fillKeys = () => put(metricSelect, [...new Set([...keys, state.key])].filter(Boolean).map((k) =>
    el("option", { value: k, selected: k === state.key }, k)));
  fillKeys();
  const heading = el("h1");
  const status = el("div", { class: "bar" });
  const errorBox = el("div");
  const chartBox = el("div", { class: "curve" });
  const stepBox = el("div");
  const dashBox = el("div", { class: "dashboard" });
  add(main, heading, status, errorBox,
    curveControls(state, run, metricSelect, () => draw()),
    el("h2", {}, "Every metric it recorded"), dashBox,
    el("h2", { id: "one-metric" }, "One metric"),
    chartBox,
    el("h2", {}, "Where a step's time goes, per worker rank"), stepBox,
    el("h2", {}, "Configuration"), el("details", { open: true }, el("summary", {}, "resolved configuration"), keyValueTable(flatten(run.config))),
    el("h2", {}, "How it ran (run facts)"), keyValueTable(run.facts),
    el("h2", {}, "Per epoch"), epochTable(run));

  const header = () => drawHeader(heading, status, errorBox, run);

  let points = null;  // the series on screen: {step, value, wall}
  let plot = null;

  async function fetchPoints() {
    const range = (state.from !== null ? `&from=${Math.floor(state.from)}` : "") + (state.to !== null ? `&to=${Math.ceil(state.to)}` : "");
    points = await series(id, state.key, state.worker, range + xQuery(state.x));
  }

  const drawChart = () => {
    plot = drawCurve(chartBox, run, state, points, (from, to) => { state.from = from; state.to = to; draw(); });
  };
  const drawSteps = () => drawStepTimes(stepBox, run);

  // The panels, drawn again when their x axis changes (and as a running run records more).
  let panelsX = null;
  async function drawPanels() {
    panelsX = state.x;
    await dashboard(dashBox, run, state.x, (key) => {
      state.key = key;
      state.from = state.to = null;
      fillKeys();
      draw().then(() => document.getElementById("one-metric").scrollIntoView());
    });
  }

  async function draw() {
    save();
    header();
    await fetchPoints();
    drawChart();
    if (panelsX !== state.x) await drawPanels();
    await drawSteps();
  }

  await draw();
  // Live: the run's new points only, appended without losing the zoom; its metrics and its step
  // times every few seconds.
  let stepsDrawn = Date.now();
  return onChange(async () => {
    run = await api(`/api/runs/${id}`);
    header();
    const now = Object.keys(run.summary).sort();
    if (now.join() !== keys.join()) {
      keys = now;
      fillKeys();
    }
    if (Date.now() - stepsDrawn > 5000) {
      stepsDrawn = Date.now();
      await drawSteps();
      await drawPanels();
    }
    if (state.from !== null || state.x !== "step") return;
    const more = await series(id, state.key, state.worker, `&after_step=${points.last_step}`);
    if (!more.step.length) return;
    points.step.push(...more.step);
    points.value.push(...more.value);
    points.wall.push(...more.wall);
    points.last_step = more.last_step;
    points.total += more.total;
    plot.setData([points.step, smooth(points.value, state.smooth)]);
    mark(chartBox, points);
  });
}

// What the page shows, from its address.
function initialState(params, run, keys) {
  return {
    key: params.get("key") || (keys.includes("train_loss") || !keys.length ? "train_loss" : keys[0]),
    worker: Number(params.get("worker") || 0),
    x: xOrStep(params.get("x"), xAxes([run])),
    log: params.get("log") === "1",
    smooth: Number(params.get("smooth") || 0),
    from: params.has("from") ? Number(params.get("from")) : null,
    to: params.has("to") ? Number(params.get("to")) : null,
  };
}

function saveState(state) {
  const p = new URLSearchParams({ key: state.key, worker: String(state.worker), x: state.x });
  if (state.log) p.set("log", "1");
  if (state.smooth) p.set("smooth", String(state.smooth));
  if (state.from !== null) p.set("from", String(state.from));
  if (state.to !== null) p.set("to", String(state.to));
  setParams(p);
}

// The one-metric chart's controls; each change redraws.
function curveControls(state, run, metricSelect, draw) {
  return el("div", { class: "bar" },
    el("label", {}, "metric"), metricSelect,
    el("label", {}, "worker"), el("input", { type: "number", min: 0, value: state.worker, onchange: (e) => { state.worker = Number(e.target.value); draw(); } }),
    el("label", {}, "x"), el("select", { onchange: (e) => { state.x = e.target.value; draw(); } },
      Object.entries(xAxes([run])).map(([x, label]) => el("option", { value: x, selected: x === state.x, title: label }, x))),
    el("label", {}, el("input", { type: "checkbox", checked: state.log, onchange: (e) => { state.log = e.target.checked; draw(); } }), "log scale"),
    el("label", {}, "smoothing"), el("input", { type: "range", min: 0, max: 0.99, step: 0.01, value: state.smooth,
      onchange: (e) => { state.smooth = Number(e.target.value); draw(); } }),
    el("button", { onclick: () => { state.from = state.to = null; draw(); } }, "reset zoom"));
}

// The run's name, status, totals, tags and note, and its error if it failed.
function drawHeader(heading, status, errorBox, run) {
  put(heading, `Run ${run.id}: `, run.name);
  put(status,
    el("span", { class: `status-${run.status}` + (run.stale ? " stale" : "") }, run.label),
    el("a", { href: link("runs", "", { experiment: run.experiment }) }, run.experiment),
    el("span", { class: "muted" }, `test accuracy ${number(run.test_accuracy)}, sent ${bytes(run.bytes_sent)} (dense ${bytes(run.bytes_dense)})`),
    el("span", { class: "device" }, `trained on ${run.device}`),
    run.tags.length ? el("span", {}, "tags: ", run.tags.join(" ")) : null,
    run.note ? el("span", {}, "note: ", run.note) : null);
  put(errorBox, run.error ? el("div", { class: "error" }, run.error) : null);
}

// The series on screen drawn against the chosen x (a zoom on the step fetches finer points
// through `onZoom`), with its query and a CSV; the chart it drew.
// Churn: a line at each step where the workers present changed, "3 present, 3 left".
function membershipMarks(run) {
  return (run.membership || []).map((m) => ({
    x: m.step,
    label: `${m.members} present` + (m.left.length ? `, ${m.left.join(" ")} left` : "") +
      (m.joined.length ? `, ${m.joined.join(" ")} joined` : ""),
  }));
}

function drawCurve(chartBox, run, state, points, onZoom) {
  clear(chartBox);
  const id = run.id;
  const x = xOf(state.x, points, run);
  const order = x.map((v, i) => i).filter((i) => x[i] !== null).sort((a, b) => x[a] - x[b]);
  const data = [order.map((i) => x[i]), smooth(order.map((i) => points.value[i]), state.smooth)];
  const plot = chart(chartBox, {
    title: `${state.key}, worker ${state.worker}` + (points.downsampled ? ` (${points.total} points; the lowest and highest of each bucket shown)` : ""),
    xLabel: state.x === "bytes" ? "bytes sent (worker)" : xAxes([run])[state.x],
    yLabel: state.key, data, lines: [{ label: state.key }], log: state.log, name: `run${id}-${state.key}`,
    xUnit: state.x === "bytes" ? "B" : undefined,
    onZoom: state.x === "step" ? onZoom : null,
    marks: state.x === "step" ? membershipMarks(run) : [],
  });
  if (state.from !== null && state.x === "step") plot.setScale("x", { min: state.from, max: state.to });
  mark(chartBox, points);
  add(chartBox, command("laconic", "query", `SELECT step, value FROM metrics WHERE run_id = ${id} AND key = '${state.key.replaceAll("'", "''")}' AND worker = ${state.worker} ORDER BY step`),
    el("button", { onclick: () => download(`run${id}-${state.key}.csv`, csv(["step", "value", "wall"], points.step.map((s, i) => [s, points.value[i], points.wall[i]]))) }, "CSV"));
  return plot;
}

// What the chart shows, for a reader that cannot see the canvas (the tests).
function mark(chartBox, points) {
  const finite = points.value.filter((v) => v !== null);
  chartBox.dataset.points = String(points.step.length);
  chartBox.dataset.max = String(finite.length ? Math.max(...finite) : "");
  chartBox.dataset.lastStep = String(points.last_step);
}

// Where each rank's step time goes, as the server adds the parts up (/api/runs/ID/step_time).
async function drawStepTimes(stepBox, run) {
  const steps = await api(`/api/runs/${run.id}/step_time`);
  clear(stepBox);
  if (steps.thread_ranks)
    add(stepBox, el("p", { class: "muted" }, "Ranks as threads: compute and compress are each thread's CPU time, wait derived, communicate projected (docs/network-model.md); one bar per rank, as its measured and projected bars would be the same."));
  const rows = [];
  for (const w of steps.workers) {
    const role = w.role;  // the server's: the resolved run's workers, then its servers
    const clock = steps.thread_ranks ? "derived" : "measured";
    rows.push({ label: `${role} ${w.worker}, ${clock}`, parts: { compute: w.compute, compress: w.compress, wait: w.wait, communicate: w.communicate_measured } });
    if (w.communicate_projected !== null && !steps.thread_ranks)
      rows.push({ label: `${role} ${w.worker}, projected`, parts: { compute: w.compute, compress: w.compress, wait: w.wait, communicate: w.communicate_projected } });
  }
  if (!rows.length) return add(stepBox, el("p", { class: "muted" }, run.status === "RUNNING" ? "No step times recorded yet." : "No step times recorded."));
  stackedBars(stepBox, rows, PARTS, PART_COLORS);
  add(stepBox, skew(steps.workers.filter((w) => w.role === "worker")));
}

// The slowest worker rank's measured step against the fastest's: how uneven the ranks were.
function skew(workers) {
  const timed = workers.filter((w) => w.step !== null);
  if (timed.length < 2) return null;
  const slow = timed.reduce((a, b) => (b.step > a.step ? b : a));
  const fast = timed.reduce((a, b) => (b.step < a.step ? b : a));
  return el("p", { class: "skew" }, `Skew: worker ${slow.worker}'s mean step ${seconds(slow.step)} against worker ${fast.worker}'s `,
    `${seconds(fast.step)} (+${number((100 * (slow.step - fast.step)) / fast.step, 3)}%).`);
}

function epochTable(run) {
  const columns = ["epoch", "test_accuracy", "test_loss", "epoch_train_loss", "epoch_time", "bytes_sent"];
  return el("table", {}, el("tr", {}, columns.map((c) => el("th", { class: "num" }, c))),
    run.epochs.map((e) => el("tr", {}, columns.map((c) => el("td", { class: "num" }, c === "bytes_sent" ? bytes(e[c]) : number(e[c]))))));
}
