// Seeing through a sweep (the experiment page): parallel coordinates, one axis per swept field and
// the final metric last, one line per configuration; dragging along an axis brushes a range of
// it and keeps the configurations inside every brush (the page then filters its tables and
// charts); and a scatter of the final metric against each swept field. Drawn from the report's
// model (GET /api/experiments/NAME: each configuration's `swept` and `final`), never computed again.
import { el, add, number } from "./util.js";
import { chart } from "./charts.js";

const NS = "http://www.w3.org/2000/svg";
const WIDTH = 900, HEIGHT = 260, TOP = 24, BOTTOM = 30, LEFT = 60, RIGHT = 60;

function svg(tag, attributes = {}, text = null) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

// An axis: where each configuration sits on it, from 0 (bottom) to 1 (top). Numbers on a linear
// scale (log where every one is positive and they span 100x), anything else in order of first
// appearance.
function axisOf(name, values) {
  const present = values.filter((v) => v !== undefined && v !== null);
  const numeric = present.length > 0 && present.every((v) => typeof v === "number");
  if (numeric) {
    const lo = Math.min(...present), hi = Math.max(...present);
    const log = lo > 0 && hi / lo >= 100;
    const f = log ? Math.log10 : (v) => v;
    const span = f(hi) - f(lo) || 1;
    return { name, numeric, ticks: [[0, number(lo)], [1, number(hi)]],
             at: (v) => (v === undefined || v === null ? null : (f(v) - f(lo)) / span) };
  }
  const categories = [...new Set(values.map((v) => (v === undefined || v === null ? "-" : String(v))))];
  const at = (v) => (categories.length === 1 ? 0.5 : categories.indexOf(v === undefined || v === null ? "-" : String(v)) / (categories.length - 1));
  return { name, numeric, categories, ticks: categories.map((c) => [at(c), c]), at };
}

/** The swept fields whose value differs between the configurations. */
export function sweptFields(configs) {
  const keys = [...new Set(configs.flatMap((c) => Object.keys(c.swept || {})))].sort();
  return keys.filter((k) => new Set(configs.map((c) => JSON.stringify(c.swept?.[k] ?? null))).size > 1);
}

/**
 * Parallel coordinates of `configs` into `box`. `brush`: {axis name: [lo, hi]} in axis units
 * (0..1); `onBrush(brush)` is called as the user drags. Returns the ids (the server's `id`) of
 * the configurations inside every brush.
 */
export function parallelCoordinates(box, configs, metric, brush, onBrush) {
  const fields = sweptFields(configs);
  const axes = [...fields.map((f) => axisOf(f, configs.map((c) => c.swept?.[f]))),
                axisOf(`final ${metric.label}`, configs.map((c) => c.final.mean))];
  const valueOf = (c, i) => (i < fields.length ? c.swept?.[fields[i]] : c.final.mean);
  const xOf = (i) => LEFT + (axes.length === 1 ? 0 : (i * (WIDTH - LEFT - RIGHT)) / (axes.length - 1));
  const yOf = (t) => TOP + (1 - t) * (HEIGHT - TOP - BOTTOM);
  const kept = (c) => axes.every((a, i) => {
    const b = brush[a.name];
    const t = a.at(valueOf(c, i));
    return !b || (t !== null && t >= b[0] - 1e-9 && t <= b[1] + 1e-9);
  });
  const root = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, class: "parallel" });
  configs.forEach((c) => {
    const points = axes.map((a, i) => { const t = a.at(valueOf(c, i)); return t === null ? null : `${xOf(i)},${yOf(t)}`; });
    const line = svg("polyline", { points: points.filter(Boolean).join(" "), fill: "none",
      stroke: kept(c) ? "#1f77b4" : "#c8cdd2", "stroke-width": kept(c) ? 2 : 1, "data-label": c.label });
    line.append(svg("title", {}, `${c.label}: final ${metric.label} ${number(c.final.mean)}`));
    root.append(line);
  });
  axes.forEach((a, i) => {
    const x = xOf(i);
    root.append(svg("line", { x1: x, x2: x, y1: TOP, y2: HEIGHT - BOTTOM, stroke: "#5d6872" }));
    root.append(svg("text", { x, y: HEIGHT - 8, "text-anchor": "middle", "font-size": 12 }, a.name));
    for (const [t, text] of a.ticks)
      root.append(svg("text", { x: x + 5, y: yOf(t) + 4, "font-size": 11, fill: "#5d6872" }, text));
    const b = brush[a.name];
    if (b) root.append(svg("rect", { x: x - 7, width: 14, y: yOf(b[1]), height: Math.max(2, yOf(b[0]) - yOf(b[1])),
                                     fill: "#1f77b433", stroke: "#1f77b4", class: "brush", "data-axis": a.name }));
    // A strip along the axis to drag on: a drag brushes its range; a click clears it.
    const strip = svg("rect", { x: x - 12, width: 24, y: TOP - 4, height: HEIGHT - TOP - BOTTOM + 8, fill: "transparent",
                                class: "axis-strip", "data-axis": a.name });
    strip.addEventListener("pointerdown", (down) => {
      const toT = (ev) => {
        const r = root.getBoundingClientRect();
        const y = ((ev.clientY - r.top) * HEIGHT) / r.height;
        return Math.min(1, Math.max(0, 1 - (y - TOP) / (HEIGHT - TOP - BOTTOM)));
      };
      const from = toT(down);
      const up = (ev) => {
        window.removeEventListener("pointerup", up);
        const to = toT(ev);
        const next = { ...brush };
        if (Math.abs(to - from) < 0.02) delete next[a.name];
        else next[a.name] = [Math.min(from, to), Math.max(from, to)];
        onBrush(next);
      };
      window.addEventListener("pointerup", up);
    });
    root.append(strip);
  });
  add(box, root);
  return new Set(configs.filter(kept).map((c) => c.id));
}

/** One scatter per swept field: the final metric against the field's value. */
export function fieldScatters(box, configs, metric, name) {
  for (const field of sweptFields(configs)) {
    const a = axisOf(field, configs.map((c) => c.swept?.[field]));
    const shown = configs.filter((c) => c.final.mean !== null);
    const xOf = (c) => (a.numeric ? c.swept?.[field] ?? null : a.categories.indexOf(c.swept?.[field] === undefined ? "-" : String(c.swept[field])));
    const xs = [...new Set(shown.map(xOf).filter((x) => x !== null))].sort((p, q) => p - q);
    const ys = xs.map((x) => shown.filter((c) => xOf(c) === x).map((c) => c.final.mean));
    // One point per configuration: configurations that share a value each get a series.
    const depth = Math.max(0, ...ys.map((v) => v.length));
    const data = [xs, ...Array.from({ length: depth }, (_, k) => ys.map((v) => v[k] ?? null))];
    const lines = Array.from({ length: depth }, (_, k) => ({ label: k === 0 ? `final ${metric.label}` : `(${k + 1})`, points: true, color: "#1f77b4" }));
    const panel = el("div", { class: "panel scatter", "data-field": field });
    add(box, panel);
    chart(panel, { title: `final ${metric.label} against ${field}`, xLabel: field + (a.numeric ? "" : " (in the order swept)"),
                   yLabel: metric.label, data, lines, width: 420, height: 220, downloads: false, legend: false,
                   logX: a.numeric && xs.length > 1 && xs[0] > 0 && xs[xs.length - 1] / xs[0] >= 100,
                   xValues: a.numeric ? undefined : (v) => a.categories[v] ?? "", name: `${name}-${field}` });
  }
}
