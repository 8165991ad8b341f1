// The runs page: every run, its swept values as columns; sort, filter (status, experiment,
// --where conditions, metric ranges), choose columns, select runs to compare. Only the rows on
// screen are drawn, so ten thousand runs scroll as fast as ten.
import { el, clear, number, bytes, seconds, route, setParams, api, download, csv, command, link, put, add } from "./util.js";
import { onChange, staticMode } from "./live.js";

const ROW = 24;  // px, as .grid tr in style.css
// Drawn first, before the whole list has come: the newest runs, which fill the default view.
const FIRST_ROWS = 200;
// The first PINNED columns stay in view when the table scrolls sideways (a run, what it is, how it
// ended and its test metric); then the rest, the swept values last but for the tags.
const PINNED = 4;
const FIRST = [
  { key: "id", label: "id", num: true },
  { key: "name", label: "run" },
  { key: "label", label: "status" },
  { key: "test_accuracy", label: "test_acc", num: true },
  { key: "bytes_sent", label: "bytes_sent", num: true, format: bytes },
  { key: "compression", label: "ratio", num: true },
  { key: "wall", label: "wall", num: true, format: seconds },
  { key: "experiment", label: "experiment" },
];
const LAST = [
  { key: "test_loss", label: "test_loss", num: true },
  { key: "test_perplexity", label: "test_ppl", num: true },
  { key: "tags", label: "tags" },
];
const DEFAULT_HIDDEN = ["test_loss", "test_perplexity"];

let runs = new Map();  // id -> run, as the API last said
let lastFetch = 0;
let statuses = [];  // what the status filter offers, as the API serves it

function value(run, key) {
  if (key === "swept") return Object.entries(run.swept).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
  if (key.startsWith("swept.")) return run.swept[key.slice(6)];
  if (key === "compression") return run.compression;  // the server's RunRow::compression_ratio
  if (key === "tags") return run.tags.join(" ");
  return run[key];
}

// The runs that satisfy the where box, as the server's `laconic runs --where` rules decide
// (GET /api/runs/matching: one grammar, one set of rules for the CLI and this page): the set of
// their ids, or null for an empty box; `error` is the server's reason for a condition it refused.
// An answer for a box that has changed since it was asked is dropped: the newer one decides.
let matching = { ids: null, conditions: [], error: "" };
let asked = "";

async function match(text) {
  asked = text;
  let answer;
  if (!text.trim()) answer = { ids: null, conditions: [], error: "" };
  else {
    try {
      const body = await api(`/api/runs/matching?where=${encodeURIComponent(text)}`);
      answer = { ids: new Set(body.ids), conditions: body.conditions, error: "" };
    } catch (e) {
      answer = { ids: new Set(), conditions: [], error: e.message };
    }
  }
  if (text === asked) matching = answer;
}

async function refresh() {
  const since = lastFetch;
  const body = await api(since ? `/api/runs?since=${since - 2}` : "/api/runs");
  lastFetch = body.now;
  statuses = body.statuses;
  for (const run of body.runs) runs.set(run.id, run);
  return body;
}

// The newest runs first when the view shows them first (sorted by id, newest on top, nothing
// filtered, not scrolled); `rest` is true when the whole list is still to be fetched (once they
// are on screen: its download and parsing would hold the first paint back).
async function firstRuns(params) {
  const plain = ["status", "experiment", "where", "top"].every((k) => !params.get(k)) &&
    (params.get("sort") || "-id") === "-id" && !staticMode();
  if (!plain) return { rest: false, total: await refresh().then(() => runs.size) };
  const body = await api(`/api/runs?newest=${FIRST_ROWS}`);
  statuses = body.statuses;
  for (const run of body.runs) runs.set(run.id, run);
  if (body.total <= body.runs.length) lastFetch = body.now;
  return { rest: body.total > body.runs.length, total: body.total };
}

// Resolves once the browser has painted what is on the page.
const painted = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

// What the page shows, from its address (and, for the tags column, from the runs it has).
function initialState(params) {
  return {
    status: params.get("status") || "",
    experiment: params.get("experiment") || "",
    where: params.get("where") || "",
    sort: params.get("sort") || "-id",
    // Tags hidden by default only while no run has one.
    hidden: new Set(params.has("hide") ? params.get("hide").split(",").filter(Boolean)
      : [...DEFAULT_HIDDEN, ...([...runs.values()].some((r) => r.tags.length) ? [] : ["tags"])]),
    swept: params.get("swept") !== "0",  // the swept columns shown, or collapsed into one
    selected: new Set((params.get("selected") || "").split(",").filter(Boolean).map(Number)),
    top: Number(params.get("top") || 0),
  };
}

// Every column the runs have, the swept ones expanded or collapsed into one.
function allColumns(state) {
  const swept = new Set();
  for (const run of runs.values()) for (const k of Object.keys(run.swept)) swept.add(k);
  const sweptColumns = [...swept].sort().map((k) => ({ key: "swept." + k, label: k }));
  // Collapsed, the swept values are one column: "compressor=topk, ratio=0.01".
  const collapsed = swept.size ? [{ key: "swept", label: "swept" }] : [];
  return [...FIRST, ...(state.swept ? sweptColumns : collapsed), ...LAST];
}

// The runs the filters keep, in the order the sort asks.
function filtered(state) {
  const list = [...runs.values()].filter((r) =>
    (!state.status || (state.status === "stale" ? r.stale : r.status === state.status && !r.stale)) &&
    (!state.experiment || r.experiment === state.experiment) && (matching.ids === null || matching.ids.has(r.id)));
  const desc = state.sort.startsWith("-");
  const key = desc ? state.sort.slice(1) : state.sort;
  list.sort((a, b) => {
    const x = value(a, key), y = value(b, key);
    if (x === y) return a.id - b.id;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return desc ? -c : c;
  });
  return list;
}

function cell(run, column) {
  const v = value(run, column.key);
  if (column.key === "name") return el("td", {}, el("a", { href: link("run", run.id) }, v));
  if (column.key === "label")
    return el("td", { class: `status-${run.status}` + (run.stale ? " stale" : "") }, v);
  const text = column.format ? column.format(v) : typeof v === "number" ? number(v) : v ?? "-";
  return el("td", { class: column.num || typeof v === "number" ? "num" : "" }, text);
}

// The header row: a click on a column sorts by it, a second click the other way.
function header(columns, state, draw) {
  return el("tr", {}, el("th", {}, ""), columns.map((c) =>
    el("th", { class: c.num ? "num" : "", onclick: () => {
      state.sort = state.sort === c.key ? "-" + c.key : c.key;
      draw();
    } }, c.label + (state.sort === c.key ? " \u25B2" : state.sort === "-" + c.key ? " \u25BC" : ""))));
}

// The pinned columns' left edges, measured on the header as drawn: each of their cells is
// sticky at its column's edge.
function pin(table) {
  const heads = [...table.rows[0].cells].slice(0, PINNED + 1);
  let left = 0;
  const lefts = heads.map((th) => { const at = left; left += th.getBoundingClientRect().width; return at; });
  for (const row of table.rows)
    [...row.cells].slice(0, PINNED + 1).forEach((c, i) => {
      c.classList.add("pin");
      c.style.left = `${lefts[i]}px`;
    });
}

// The column chooser's boxes.
function columnChoices(every, state, draw) {
  return every.map((c) => el("label", {},
    el("input", { type: "checkbox", checked: !state.hidden.has(c.key), onchange: (e) => {
      if (e.target.checked) state.hidden.delete(c.key);
      else state.hidden.add(c.key);
      draw();
    } }), c.label));
}

// The command that lists the runs the filters keep.
function runsCommand(state) {
  return command("laconic", "runs", ...(state.experiment ? ["--experiment", state.experiment] : []),
    ...(state.status && state.status !== "stale" ? ["--status", state.status] : []),
    ...matching.conditions.flatMap((c) => ["--where", c]));
}

// The page's address: what it shows, and how far down it is scrolled.
function saveState(state, grid) {
  const p = new URLSearchParams();
  for (const k of ["status", "experiment", "where", "sort"]) if (state[k]) p.set(k, state[k]);
  p.set("hide", [...state.hidden].join(","));
  if (!state.swept) p.set("swept", "0");
  if (state.selected.size) p.set("selected", [...state.selected].join(","));
  if (grid.scrollTop) p.set("top", String(Math.round(grid.scrollTop / ROW)));
  setParams(p);
}

// The filters' controls; each change redraws.
function filterControls(state, draw) {
  return {
    statusSelect: el("select", { onchange: (e) => { state.status = e.target.value; draw(); } },
      ["", ...statuses].map((s) => el("option", { value: s, selected: s === state.status }, s || "any status"))),
    experimentSelect: el("select", { onchange: (e) => { state.experiment = e.target.value; draw(); } }),
    whereInput: el("input", { type: "text", value: state.where, placeholder: "compressor=topk, test_accuracy>0.8",
      onchange: async (e) => { state.where = e.target.value; await match(state.where); draw(); } }),
    whereError: el("span", { class: "error" }),
  };
}

export async function runsPage(main) {
  runs = new Map();
  lastFetch = 0;
  const { params } = route();
  let { rest, total } = await firstRuns(params);
  await match(params.get("where") || "");
  const state = initialState(params);
  const save = () => saveState(state, grid);

  const title = el("h1", {}, "Runs");
  const count = el("span", { class: "muted" });
  const { statusSelect, experimentSelect, whereInput, whereError } = filterControls(state, () => draw());
  const compareLink = el("a", {}, "compare selected");
  const columnsBox = el("details", {}, el("summary", {}, "columns"), el("div", { class: "columns" }));
  const sweptToggle = el("button", { id: "swept-toggle", onclick: () => { state.swept = !state.swept; draw(); } });
  const grid = el("div", { class: "grid" });
  const spacer = el("div");
  const table = el("table");
  grid.append(spacer, table);
  const cmd = el("div");
  add(main, title,
    el("div", { class: "bar" }, el("label", {}, "status"), statusSelect, el("label", {}, "experiment"), experimentSelect,
      el("label", {}, "where"), whereInput, whereError),
    el("div", { class: "bar" }, count, compareLink,
      el("button", { onclick: () => exportCsv() }, "CSV"), sweptToggle, columnsBox),
    grid, cmd);

  let shown = [];
  let columns = [];

  // Draws the rows in view (and a few around), over a spacer as tall as every row.
  function drawRows() {
    const first = Math.max(0, Math.floor(grid.scrollTop / ROW) - 10);
    const last = Math.min(shown.length, first + Math.ceil(grid.clientHeight / ROW) + 20);
    put(table, header(columns, state, draw));
    table.style.top = `${first * ROW}px`;
    for (let i = first; i < last; i++) {
      const run = shown[i];
      const box = el("input", { type: "checkbox", checked: state.selected.has(run.id), onchange: (e) => {
        if (e.target.checked) state.selected.add(run.id);
        else state.selected.delete(run.id);
        updateCompare();
        save();
      } });
      table.append(el("tr", { "data-id": run.id }, el("td", {}, box), columns.map((c) => cell(run, c))));
    }
    pin(table);
  }

  function updateCompare() {
    const ids = [...state.selected];
    compareLink.href = link("compare", "", { runs: ids.join(",") });
    compareLink.textContent = `compare selected (${ids.length})`;
  }

  function draw() {
    const experiments = [...new Set([...runs.values()].map((r) => r.experiment))];
    put(experimentSelect, el("option", { value: "" }, "any"),
      experiments.map((e) => el("option", { value: e, selected: e === state.experiment }, e)));
    const every = allColumns(state);
    columns = every.filter((c) => !state.hidden.has(c.key));
    sweptToggle.textContent = state.swept ? "collapse swept columns" : "expand swept columns";
    put(columnsBox.lastChild, columnChoices(every, state, draw));
    whereError.textContent = matching.error;
    shown = filtered(state);
    count.textContent = rest ? `the newest ${shown.length} of ${total} runs (loading the rest)`
      : `${shown.length} of ${runs.size} runs`;
    spacer.style.height = `${(shown.length + 1) * ROW}px`;
    drawRows();
    updateCompare();
    put(cmd, runsCommand(state));
    save();
  }

  function exportCsv() {
    download("runs.csv", csv(columns.map((c) => c.label), shown.map((r) => columns.map((c) => value(r, c.key)))));
  }

  grid.addEventListener("scroll", () => { drawRows(); save(); });
  draw();
  if (state.top) grid.scrollTop = state.top * ROW;
  const whole = rest && painted().then(refresh).then(() => {
    rest = false;
    // Tags shown by default once any run has one, older runs' too.
    if (!params.has("hide") && [...runs.values()].some((r) => r.tags.length)) state.hidden.delete("tags");
    const top = grid.scrollTop;
    draw();
    grid.scrollTop = top;
  });
  const stop = onChange(async () => {
    await whole;  // the whole list first: `since` counts from it
    await refresh();
    await match(state.where);  // a run that finished may meet a condition on its final metric now
    const top = grid.scrollTop;
    draw();
    grid.scrollTop = top;
  });
  return stop;
}
