// Charts over uPlot (pinned by ui/package-lock.json): lines, lines with a band, points; each
// with its own PNG and SVG download. uPlot draws on a canvas; the SVG is drawn here from the
// same data.
import { el, download, add } from "./util.js";

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                "#7f7f7f", "#bcbd22"];
const DASHES = [[], [6, 3], [2, 2], [8, 3, 2, 3]];

export function color(i) {
  return COLORS[i % COLORS.length];
}

const PREFIXES = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];

/** 10 M, 2.5 G, 750 k, 12: SI prefixes, at most three significant digits, and `unit` after. */
export function siText(value, unit = "") {
  if (value === null || !Number.isFinite(value)) return "";
  const abs = Math.abs(value);
  for (const [scale, prefix] of PREFIXES)
    if (abs >= scale) return `${Number((value / scale).toPrecision(3))} ${prefix}${unit}`;
  return `${Number(value.toPrecision(3))}${unit ? " " + unit : ""}`;
}

/** Exponential moving average with weight `s` in [0, 1); nulls stay null. */
export function smooth(values, s) {
  if (!s) return values;
  let last = null;
  return values.map((v) => (v === null ? null : (last = last === null ? v : s * last + (1 - s) * v)));
}

function svgOf(data, series, width = 800, height = 400) {
  const xs = data[0];
  const finite = (a) => a.filter((v) => v !== null && Number.isFinite(v));
  const ys = data.slice(1).flatMap(finite);
  const [x0, x1] = [Math.min(...finite(xs)), Math.max(...finite(xs))];
  const [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  const px = (x) => 40 + ((x - x0) / (x1 - x0 || 1)) * (width - 60);
  const py = (y) => height - 30 - ((y - y0) / (y1 - y0 || 1)) * (height - 50);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("xmlns", ns);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  data.slice(1).forEach((values, i) => {
    const points = values.map((y, j) => (y === null || xs[j] === null ? null : `${px(xs[j])},${py(y)}`))
      .filter(Boolean).join(" ");
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", points);
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", series[i + 1].stroke || "#000");
    if (series[i + 1].points?.only) line.setAttribute("stroke-dasharray", "1 6");
    svg.append(line);
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", 44);
    label.setAttribute("y", 16 + 14 * i);
    label.setAttribute("fill", series[i + 1].stroke || "#000");
    label.setAttribute("font-size", "12");
    label.textContent = series[i + 1].label;
    svg.append(label);
  });
  for (const [text, x, y] of [[String(y1.toPrecision(4)), 2, 24], [String(y0.toPrecision(4)), 2, height - 30],
                              [String(x0.toPrecision(4)), 40, height - 8], [String(x1.toPrecision(4)), width - 80, height - 8]]) {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", x);
    t.setAttribute("y", y);
    t.setAttribute("font-size", "11");
    t.textContent = text;
    svg.append(t);
  }
  return new XMLSerializer().serializeToString(svg);
}

/**
 * A chart in `container`. `data` is uPlot's: [xs, ys...]; `lines` one entry per y series:
 * {label, color?, band?: [upper index, lower index] (filled between), quiet?: true (no line of its
 * own: a band's edges), points?: true (points, no line), hidden?: true}.
 */
// Vertical lines at x values with a label at the top (a run's changes of membership).
function drawMarks(u, marks) {
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = "#888";
  ctx.fillStyle = "#555";
  ctx.setLineDash([4, 4]);
  ctx.font = `${Math.round(11 * devicePixelRatio)}px sans-serif`;
  ctx.textAlign = "left";  // uPlot leaves the axes' alignment set
  ctx.textBaseline = "alphabetic";
  for (const m of marks) {
    const x = Math.round(u.valToPos(m.x, "x", true));
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.fillText(m.label, x + 3 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
  }
  ctx.restore();
}

export function chart(container, { title, xLabel, yLabel, data, lines, log = false, logX = false, time = false, onZoom, name,
                                   xUnit, yUnit, xValues, width: fixedWidth, height = 340, sync, downloads = true, legend = true,
                                   marks = [] }) {
  const box = el("div", { class: "chart" });
  add(container, box);
  const series = [{ label: xLabel }];
  const bands = [];
  lines.forEach((line, i) => {
    series.push({
      label: line.label,
      stroke: line.color || color(i),
      dash: DASHES[Math.floor(i / COLORS.length) % DASHES.length],
      width: line.faint ? 1 : line.quiet ? 0 : 1.5,
      show: !line.hidden,
      spanGaps: true,
      points: line.points ? { show: true, size: 7, fill: line.color || color(i) } : { show: false },
      paths: line.points ? () => null : undefined,
    });
    if (line.band) bands.push({ series: line.band, fill: (line.color || color(i)) + "33" });
  });
  const width = fixedWidth || Math.max(480, Math.min(1100, container.clientWidth || 900));
  const options = {
    title, width, height, series, bands,
    // Charts of one sync key share their cursor: hovering a step on one marks it on every panel.
    ...(sync ? { cursor: { sync: { key: sync } } } : {}),
    scales: { x: { time, distr: logX ? 3 : 1 }, y: { distr: log ? 3 : 1 } },
    // With a unit, ticks in SI prefixes ("10 MB", "1 Gbit/s"): a log axis of bytes reads.
    axes: [{ label: xLabel, ...(xUnit !== undefined ? { values: (u, splits) => splits.map((v) => siText(v, xUnit)) } : {}),
             // Categories on x: their names at whole positions, nothing between.
             ...(xValues ? { values: (u, splits) => splits.map((v) => (Number.isInteger(v) ? xValues(v) : "")) } : {}) },
           { label: yLabel, size: 70, ...(yUnit !== undefined ? { values: (u, splits) => splits.map((v) => siText(v, yUnit)) } : {}) }],
    legend: { show: legend, live: true },
    hooks: {
      ...(onZoom ? { setSelect: [(u) => {
        if (u.select.width <= 0) return;
        onZoom(u.posToVal(u.select.left, "x"), u.posToVal(u.select.left + u.select.width, "x"));
      }] } : {}),
      ...(marks.length ? { draw: [(u) => drawMarks(u, marks)] } : {}),
    },
  };
  const plot = new uPlot(options, data, box);
  box.plot = plot;  // its data, for the page's tests
  // A band's edges and a smoothed curve's raw line have no legend entry of their own: one per curve.
  const legendRows = box.querySelectorAll(".u-legend .u-series");
  lines.forEach((line, i) => { if (line.quiet && legendRows[i + 1]) legendRows[i + 1].style.display = "none"; });
  box.dataset.chartPoints = String(data[0].filter((x) => x !== null && Number.isFinite(x)).length);
  box.dataset.xScale = logX ? "log" : "linear";  // what the tests (and a reader of the page) can ask
  if (marks.length) box.dataset.marks = marks.map((m) => `${m.x}: ${m.label}`).join("; ");
  if (xUnit !== undefined) box.dataset.xUnit = xUnit;
  if (box.dataset.chartPoints === "1")
    add(box, el("p", { class: "muted one-point" }, "One point only: nothing to draw a line through."));
  const file = name || "chart";
  box.dataset.name = file;
  if (downloads) add(box, el("div", { class: "bar" },
    el("button", { onclick: () => plot.ctx.canvas.toBlob((b) => saveBlob(file + ".png", b)) }, "PNG"),
    el("button", { onclick: () => download(file + ".svg", svgOf(plot.data, series), "image/svg+xml") }, "SVG")));
  return plot;
}

function saveBlob(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = el("a", { href: url, download: name });
  document.add(body, a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Parts of a step as stacked bars: one row per entry {label, parts: {name: seconds}}. */
export function stackedBars(container, rows, parts, colors) {
  const longest = Math.max(1e-12, ...rows.map((r) => parts.reduce((s, p) => s + (r.parts[p] || 0), 0)));
  const table = el("table", {},
    rows.map((r) => el("tr", {},
      el("td", {}, r.label),
      el("td", { style: null },
        (() => {
          const bar = el("div", { class: "stack" });
          parts.forEach((p, i) => {
            const v = r.parts[p] || 0;
            const span = el("span", { title: `${p}: ${(v * 1000).toPrecision(3)} ms` });
            span.style.width = `${(400 * v) / longest}px`;
            span.style.background = colors[i];
            bar.append(span);
          });
          return bar;
        })()),
      el("td", { class: "num" }, `${(parts.reduce((s, p) => s + (r.parts[p] || 0), 0) * 1000).toPrecision(3)} ms`))));
  add(container, table,
    el("div", { class: "legend muted" }, parts.map((p, i) => {
      const swatch = el("span");
      swatch.style.background = colors[i];
      return [swatch, p];
    })));
}
