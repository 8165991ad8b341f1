// `laconic ui` in a real browser: Debian's chromium, driven by playwright-core (pinned by
// ui/package-lock.json), against servers on port 0 over databases tests/ui/ui_fixtures.cpp
// writes. What a user sees: the database's values on the page, a row another process inserts
// appearing within 2 s, a spike among a million points, the Pareto set, "Does it pay off?" on a
// hardware profile the runs name, exactly the differing keys, a copied link reproducing the view, hostile names as text, and the file unchanged.
// Run by ctest (tests/ui/CMakeLists.txt) with LACONIC, UI_FIXTURES, NODE_MODULES and CHROMIUM set;
// SCREENSHOTS=DIR also writes the pages' pictures for docs/ui.md.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const require = createRequire(path.join(path.resolve(process.env.NODE_MODULES), "noop.js"));
const { chromium } = require("playwright-core");
const LACONIC = process.env.LACONIC;
const FIXTURES = process.env.UI_FIXTURES;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "laconic-ui-"));
let browser;
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const children = new Set();  // every process a test started: stopped in after(), whatever failed

function track(child) {
  children.add(child);
  child.on("exit", () => children.delete(child));
  return child;
}

function fixture(mode, name, ...args) {
  const db = path.join(dir, name);
  execFileSync(FIXTURES, [mode, db, ...args.map(String)], { timeout: 120000 });
  return db;
}

/** `laconic ui` on a free port; resolves to {url, stop()} once it printed its URL. */
function serve(db, ...flags) {
  return new Promise((resolve, reject) => {
    const child = track(spawn(LACONIC, ["ui", "--db", db, "--port", "0", ...flags], { stdio: ["ignore", "pipe", "pipe"] }));
    let out = "", err = "";
    const timer = setTimeout(() => reject(new Error("laconic ui printed no URL in 20 s: " + out + err)), 20000);
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/(http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          output: () => out + err,
          stop: () => new Promise((done) => {
            if (child.exitCode !== null) return done({ code: child.exitCode, output: out + err });
            child.on("exit", (code) => done({ code, output: out + err }));
            child.kill("SIGINT");
          }),
        });
      }
    });
    child.on("exit", (code) => reject(new Error(`laconic ui exited ${code}: ${out}${err}`)));
  });
}

function query(db, sql) {
  return JSON.parse(execFileSync(LACONIC, ["query", "--db", db, "--format", "json", sql]).toString());
}

function fingerprint(file) {
  return { hash: createHash("sha256").update(fs.readFileSync(file)).digest("hex"), mtime: fs.statSync(file).mtimeMs };
}

async function open(url, page = null) {
  // A page already showing a view keeps its body[data-ready] (the route shown) through a change of
  // hash: wait until it names another route, not merely until it is there.
  const before = page ? await page.evaluate(() => document.body.dataset.ready ?? null) : null;
  page ??= await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(url);
  await page.waitForFunction((shown) => document.body.dataset.ready && document.body.dataset.ready !== shown, before,
                             { timeout: 15000 });
  page.errors = errors;
  return page;
}

async function screenshot(page, name) {
  if (!process.env.SCREENSHOTS) return;
  fs.mkdirSync(process.env.SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(process.env.SCREENSHOTS, name + ".png"), fullPage: false });
}

let small, smallBefore, server;

before(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
  small = fixture("small", "small.db");
  smallBefore = fingerprint(small);
  server = await serve(small);
});

after(async () => {
  for (const child of children) child.kill("SIGKILL");
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("the runs page shows every run with the database's values", async () => {
  const page = await open(server.url + "#/runs");
  const expected = query(small, "SELECT r.id, r.name, r.status, s.last AS acc FROM runs r LEFT JOIN run_summary s ON s.run_id = r.id AND s.key = 'test_accuracy'");
  for (const row of expected) {
    const tr = page.locator(`tr[data-id="${row.id}"]`);
    await tr.waitFor();
    const text = await tr.innerText();
    assert.ok(text.includes(row.name), `run ${row.id}: ${text}`);
    if (row.acc !== null) assert.ok(text.includes(String(Number(row.acc.toPrecision(4)))), `run ${row.id} accuracy ${row.acc}: ${text}`);
  }
  const stale = await page.locator('tr:has-text("compressor=bf16")').innerText();
  assert.match(stale, /RUNNING \(stale\)/);
  assert.deepEqual(page.errors, []);
  await screenshot(page, "runs");
  await page.close();
});

test("names, configurations and errors from users' files render as text, never as markup", async () => {
  const page = await open(server.url + "#/runs");
  assert.ok((await page.content()).includes("&lt;script&gt;window.__xss=2&lt;/script&gt;"));
  const id = query(small, "SELECT id FROM runs WHERE name LIKE '<script>%'")[0].id;
  await open(server.url + `#/run/${id}`, page);
  assert.ok((await page.innerText("main")).includes('<img src=y onerror="window.__xss=4"> in the error'));
  await page.goto(server.url + "#/experiments");
  await page.waitForSelector("text=<img src=x");
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator("main img").count(), 0);
  await page.close();
});

test("a copied link reproduces the view in a fresh browser", async () => {
  const page = await open(server.url + "#/runs");
  await page.selectOption("select >> nth=0", "FINISHED");
  await page.fill("input[type=text]", "compressor=topk");
  await page.press("input[type=text]", "Enter");
  await page.waitForFunction(() => document.querySelectorAll("tr[data-id]").length === 2);
  const url = page.url();
  const ids = await page.locator("tr[data-id]").evaluateAll((rows) => rows.map((r) => r.dataset.id));
  const fresh = await browser.newContext();
  const again = await open(url, await fresh.newPage());
  await again.waitForFunction(() => document.querySelectorAll("tr[data-id]").length === 2);
  assert.deepEqual(await again.locator("tr[data-id]").evaluateAll((rows) => rows.map((r) => r.dataset.id)), ids);
  assert.equal(await again.inputValue("input[type=text]"), "compressor=topk");
  await fresh.close();
  await page.close();
});

test("the runs page's where box keeps the runs `laconic runs --where` keeps, on one table of cases", async () => {
  const cases = path.join(dir, "where.json");
  const db = fixture("where", "where.db", cases);
  const s = await serve(db);
  const names = Object.fromEntries(query(db, "SELECT id, name FROM runs").map((r) => [r.id, r.name]));
  const page = await open(s.url + "#/runs");
  for (const c of JSON.parse(fs.readFileSync(cases, "utf8"))) {
    await page.fill("input[type=text]", c.where);
    await page.press("input[type=text]", "Enter");
    if (c.error) {
      await page.waitForFunction((text) => document.querySelector(".bar .error")?.textContent.includes(text), c.error);
      assert.equal(await page.locator("tr[data-id]").count(), 0, c.where);
      continue;
    }
    // Until the rows are this case's own (the last case's may have as many): on a timeout the
    // assertion below says which runs differ.
    const wanted = Object.keys(names).filter((id) => c.names.includes(names[id])).sort().join(",");
    await page
      .waitForFunction(
        (ids) => [...document.querySelectorAll("tr[data-id]")].map((r) => r.dataset.id).sort().join(",") === ids,
        wanted,
        { timeout: 10000 },
      )
      .catch(() => {});
    const shown = await page.locator("tr[data-id]").evaluateAll((rows) => rows.map((r) => r.dataset.id));
    assert.deepEqual(shown.map((id) => names[id]).sort(), [...c.names].sort(), c.where);
    assert.equal(await page.locator(".bar .error").innerText(), "", c.where);
  }
  // The refusals are the server's 400s, which the browser logs as failed loads; nothing else.
  assert.deepEqual(page.errors.filter((e) => !e.includes("status of 400")), []);
  await page.close();
  await s.stop();
});

test("compare shows exactly the configuration keys that differ, and the seeds as a band", async () => {
  const [a, b] = query(small, "SELECT id, config FROM runs WHERE name IN ('compressor=none,seed=1', 'compressor=topk,ratio=0.01,seed=1') ORDER BY id");
  const flat = (o, p = "", out = {}) => {
    for (const [k, v] of Object.entries(o)) {
      if (k === "swept" && !p) continue;
      if (v && typeof v === "object" && !Array.isArray(v)) flat(v, p + k + ".", out);
      else out[p + k] = JSON.stringify(v);
    }
    return out;
  };
  const fa = flat(JSON.parse(a.config)), fb = flat(JSON.parse(b.config));
  const differing = [...new Set([...Object.keys(fa), ...Object.keys(fb)])].filter((k) => fa[k] !== fb[k]).sort();
  const page = await open(server.url + `#/compare?runs=${a.id},${b.id}`);
  const shown = await page.locator("table.diff tr[data-key]").evaluateAll((rows) => rows.map((r) => r.dataset.key).sort());
  assert.deepEqual(shown, differing);
  await screenshot(page, "compare");
  const seeds = query(small, "SELECT id FROM runs WHERE name LIKE 'compressor=topk%' ORDER BY id").map((r) => r.id);
  await page.goto(server.url + `#/compare?runs=${seeds.join(",")}&key=train_loss`);
  await page.waitForSelector("text=(mean of n=2)");
  await page.close();
});

test("the compare page is steered from the URL: metric, x axis, log scale, smoothing with the raw curve kept", async () => {
  const ids = query(small, "SELECT id FROM runs WHERE name IN ('compressor=none,seed=1', 'compressor=fp16,seed=1') ORDER BY id").map((r) => r.id);
  const page = await open(server.url + `#/compare?runs=${ids.join(",")}&key=train_loss&bands=0&x=bytes&log=1&smooth=0.6`);
  await page.waitForSelector(".chart");
  assert.equal(await page.locator("#compare-key").inputValue(), "train_loss");
  assert.equal(await page.locator("#compare-x").inputValue(), "bytes");
  assert.ok(await page.locator("#compare-log").isChecked());
  assert.equal(await page.locator("#compare-smooth").inputValue(), "0.6");
  const chartData = await page.locator(".chart").first().evaluate((box) => ({
    data: box.plot.data.map((a) => Array.from(a)), log: box.plot.scales.y.distr, legend:
      [...box.querySelectorAll(".u-legend .u-series")].filter((r) => r.style.display !== "none").length }));
  assert.equal(chartData.log, 3);  // uPlot's log distribution
  assert.equal(chartData.legend, 1 + ids.length);  // the x, then one entry per run: no raw or band entries
  // Each run: its raw values (worker 0's train_loss, as recorded) at its bytes sent, then their
  // exponential moving average with weight 0.6.
  ids.forEach((id, i) => {
    const rows = query(small, `SELECT value FROM metrics WHERE run_id = ${id} AND key = 'train_loss' AND worker = 0 ORDER BY step`).map((r) => r.value);
    const raw = chartData.data[1 + 2 * i].filter((v) => v !== null);
    const smoothed = chartData.data[2 + 2 * i].filter((v) => v !== null);
    assert.deepEqual(raw.map((v) => Number(v.toPrecision(9))), rows.map((v) => Number(v.toPrecision(9))));
    let last = null;
    const ema = rows.map((v) => (last = last === null ? v : 0.6 * last + 0.4 * v));
    smoothed.forEach((v, j) => assert.ok(Math.abs(v - ema[j]) < 1e-9, `run ${id} point ${j}: ${v} against ${ema[j]}`));
  });
  // Steering from the page writes the URL back.
  await page.selectOption("#compare-x", "step");
  await page.waitForFunction(() => !location.hash.includes("x=bytes"));
  await page.close();
});

test("the experiment page marks the fixture's Pareto set and moves the bandwidth", async () => {
  const page = await open(server.url + "#/experiment/sweep");
  const front = await page.locator("text=On the Pareto front").innerText();
  assert.match(front, /none/);
  assert.match(front, /topk/);
  assert.doesNotMatch(front, /fp16/);
  // Compute utilization as the API (and the report's step-time table) computes it.
  const api = await (await fetch(server.url + "api/experiments/sweep")).json();
  const shown = await page.locator("p.utilization").innerText();
  for (const c of api.configurations)
    assert.ok(shown.includes(`${c.label} ${Math.round(100 * c.step.compute_utilization)}%`), shown);
  const before = await page.locator("tr[data-label]").first().innerText();
  await page.locator("input[type=range] >> nth=-1").fill("0");
  await page.waitForFunction(() => /10 Mbit\/s/.test(document.body.innerText));
  assert.notEqual(await page.locator("tr[data-label]").first().innerText(), before);
  await screenshot(page, "experiment");
  // Each section's lead as the API gives its blocks (the report's HTML alike): a <p> per
  // paragraph, a <ul> per list of "- " lines, never the whole lead run into one paragraph.
  const model = await (await fetch(server.url + "api/experiments/sweep")).json();
  const leads = await page.evaluate((anchors) => anchors.map((id) =>
    [...document.getElementById(id).querySelectorAll(":scope > p, :scope > ul")].map((b) =>
      b.tagName === "UL" ? { items: [...b.children].map((li) => li.textContent) } : { text: b.textContent })),
  model.sections.map((s) => s.anchor));
  assert.deepEqual(leads, model.sections.map((s) => s.lead_blocks));
  assert.ok(model.sections.some((s) => s.lead_blocks.length > 1), "this checks a lead of more than one paragraph");
  // A target the user sets: Top-k's runs reach 0.83, as many as the database says.
  const reached = query(small, "SELECT count(DISTINCT r.id) AS n FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.name LIKE 'compressor=topk%' AND m.key = 'test_accuracy' AND m.value >= 0.83")[0].n;
  const topk = page.locator('#time-and-bytes-to-target tr:has-text("topk")');
  assert.match(await topk.innerText(), /0\/2/);
  await page.fill("#time-and-bytes-to-target input[type=number]", "0.83");
  await page.press("#time-and-bytes-to-target input[type=number]", "Enter");
  await page.waitForFunction(() => location.hash.includes("target=0.83"));
  await page.waitForFunction((n) => document.querySelector("#time-and-bytes-to-target").innerText.includes(`${n}/2`), reached);
  assert.equal(reached, 2);
  await page.close();
});

test("the experiment page projects \"Does it pay off?\" onto the hardware profile its runs name", async () => {
  const gpu = await serve(fixture("hardware", "hardware.db"));
  const model = await (await fetch(gpu.url + "api/experiments/gpu")).json();
  assert.equal(model.hardware.name, "Fixture GPU");
  const topk = model.configurations.find((c) => c.label.includes("topk"));
  // A tenth of the compute makes communication a larger share of the step: the answer moves.
  assert.notEqual(topk.scan_there.text, topk.scan.text);
  const page = await open(gpu.url + "#/experiment/gpu");
  await page.waitForSelector("text=On Fixture GPU (projected)");
  const row = page.locator('tr[data-label*="topk"]');
  assert.ok((await row.innerText()).includes(topk.scan.text));
  await page.selectOption("#steps-on", "there");
  await page.waitForFunction(() => location.hash.includes("on=there"));
  await page.waitForSelector("text=against the baseline on Fixture GPU");
  assert.ok((await row.innerText()).includes(topk.scan_there.text));
  assert.deepEqual(page.errors, []);
  await page.locator("#pays-off").evaluate((h) => h.scrollIntoView());
  await screenshot(page, "experiment-hardware");
  const again = await open(page.url(), await browser.newPage());
  assert.equal(await again.inputValue("#steps-on"), "there");
  await again.close();
  await page.close();
  assert.equal((await gpu.stop()).code, 0);
});

test("the experiment page's wide tables scroll inside their section: the page never scrolls sideways", async () => {
  const verdicts = await serve(fixture("verdicts", "verdicts.db"));
  const page = await open(verdicts.url + "#/experiment/verdicts", await browser.newPage({ viewport: { width: 1000, height: 900 } }));
  await page.waitForSelector(".section-table table");
  const sizes = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, view: innerWidth,
    widest: Math.max(...[...document.querySelectorAll(".section-table table")].map((t) => t.scrollWidth)) }));
  assert.ok(sizes.widest > sizes.view, `this checks a table wider than the window; the widest is ${sizes.widest} px`);
  assert.ok(sizes.page <= sizes.view, `the page is ${sizes.page} px wide in a ${sizes.view} px window`);
  assert.deepEqual(page.errors, []);
  await page.close();
  assert.equal((await verdicts.stop()).code, 0);
});

test("a one-step spike among a million points stays visible", async () => {
  const db = fixture("series", "series.db", 1000000);
  const s = await serve(db);
  const body = await (await fetch(s.url + "api/runs/1/series?key=train_loss&points=1000")).json();
  assert.equal(body.total, 1000000);
  assert.ok(body.step.length <= 3000, `${body.step.length} points`);
  assert.equal(Math.max(...body.value), 1000);
  const page = await open(s.url + "#/run/1?key=train_loss");
  await page.waitForSelector(".curve[data-max]");
  assert.equal(await page.locator("[data-max]").getAttribute("data-max"), "1000");
  await screenshot(page, "run");
  await page.close();
  await s.stop();
});

test("a run another process writes appears within 2 s, and its curve grows", async () => {
  const db = fixture("small", "live.db");
  const s = await serve(db);
  const page = await open(s.url + "#/runs");
  const polling = await open(s.url + "?poll#/runs");  // a page without an event stream
  assert.equal(await polling.locator("#live").innerText(), "live (polling)");
  const writer = track(spawn(FIXTURES, ["live", db, "6"], { stdio: ["ignore", "pipe", "inherit"] }));
  const id = await new Promise((resolve) => writer.stdout.once("data", (d) => resolve(Number(String(d).trim()))));
  const started = Date.now();
  await Promise.all([page, polling].map((p) => p.waitForSelector(`tr[data-id="${id}"]`, { timeout: 2000 })));
  const waited = Date.now() - started;
  assert.ok(waited <= 2000, `${waited} ms`);
  await polling.close();
  await page.goto(s.url + `#/run/${id}?key=train_loss`);
  await page.waitForSelector(".curve[data-points]");
  const first = Number(await page.locator("[data-points]").getAttribute("data-points"));
  await page.waitForFunction((n) => Number(document.querySelector("[data-points]").dataset.points) > n + 5, first, { timeout: 5000 });
  await new Promise((resolve) => (writer.exitCode !== null ? resolve() : writer.on("exit", resolve)));
  await page.waitForSelector(".status-FINISHED", { timeout: 5000 });  // its end, without a reload
  await page.close();
  const stopped = await s.stop();
  assert.equal(stopped.code, 0);
});

test("the server only reads: no method but GET, no file outside its pages, the database unchanged", async () => {
  const post = await fetch(server.url + "api/runs", { method: "POST", body: "{}" });
  assert.equal(post.status, 405);
  const put = await fetch(server.url + "api/runs/1", { method: "PUT", body: "{}" });
  assert.equal(put.status, 405);
  // Refused at once, before any body is read: also a PATCH that sends none, and OPTIONS.
  for (const method of ["PATCH", "OPTIONS", "DELETE"]) {
    const r = await fetch(server.url + "api/runs", { method, signal: AbortSignal.timeout(2000) });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get("allow"), "GET, HEAD");
    assert.match((await r.json()).error, new RegExp(`only reads: GET and HEAD, not ${method}`));
  }
  // A malformed run id is a 400 that says why; a path no route serves a 404 that says so.
  const malformed = await fetch(server.url + "api/runs/abc");
  assert.equal(malformed.status, 400);
  assert.match((await malformed.json()).error, /a run id is a number .* not 'abc'/);
  const missing = await fetch(server.url + "api/nothing");
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).error, "no such page: /api/nothing");
  for (const escape of ["assets/../../../../etc/passwd", "assets/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "assets/..%2fserver.cpp"]) {
    const r = await fetch(server.url + escape);
    assert.notEqual(r.status, 200, escape);
  }
  const page = await fetch(server.url);
  assert.match(page.headers.get("content-security-policy"), /default-src 'none'; script-src 'self'/);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0);
  assert.match(stopped.output, /laconic ui: stopped/);
  assert.deepEqual(fingerprint(small), smallBefore);
});

test("the experiment page's parallel coordinates show the sweep, and a brush filters its tables and charts", async () => {
  const db = fixture("small", "parallel.db");
  const s = await serve(db);
  const page = await open(s.url + "#/experiment/sweep");
  await page.waitForSelector("svg.parallel");
  // One line per configuration, its final metric the database's mean over its seeds.
  const finals = query(db, "SELECT json_extract(r.config, '$.compressor.name') AS c, avg(m.value) AS v FROM runs r JOIN run_summary s ON s.run_id = r.id AND s.key = 'test_accuracy' JOIN (SELECT run_id, last AS value FROM run_summary WHERE key = 'test_accuracy') m ON m.run_id = r.id WHERE r.status = 'FINISHED' GROUP BY c");
  const lines = await page.locator("svg.parallel polyline").evaluateAll((ls) => ls.map((l) => ({ label: l.dataset.label, title: l.textContent })));
  assert.equal(lines.length, finals.length);
  for (const f of finals) {
    const line = lines.find((l) => l.label.startsWith(f.c));
    assert.ok(line, f.c);
    assert.match(line.title, new RegExp(`final test accuracy ${Number(f.v.toPrecision(4))}$`));
  }
  assert.equal(await page.locator(".scatter").count(), 2);  // compressor and compressor.ratio
  // Drag along the compressor axis from its top (fp16) down past topk: none is left out.
  const strip = await page.locator('.axis-strip[data-axis="compressor"]').boundingBox();
  await page.mouse.move(strip.x + strip.width / 2, strip.y + 1);  // above the axis's top: fp16 included
  await page.mouse.down();
  await page.mouse.move(strip.x + strip.width / 2, strip.y + strip.height * 0.6, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => location.hash.includes("brush=compressor"));
  await page.waitForSelector("text=2 of 3 configurations kept");
  const answerRows = await page.locator("#answer .section-table tr").evaluateAll((rows) =>
    rows.filter((r) => !r.hidden).map((r) => r.cells[0].textContent));
  assert.ok(!answerRows.includes("none") && answerRows.includes("fp16") && answerRows.includes("topk ratio=0.01"), answerRows.join("|"));
  // The table of runs too: dense's runs are hidden, the others' shown.
  const runRows = await page.locator("#runs .section-table tr").evaluateAll((rows) =>
    rows.filter((r) => !r.hidden).map((r) => r.cells[0].textContent));
  assert.ok(!runRows.some((n) => n.startsWith("compressor=none")) && runRows.some((n) => n.startsWith("compressor=topk")), runRows.join("|"));
  // The brush is in the URL: a fresh page opens with it.
  const url = page.url();
  const again = await open(url);
  await again.waitForSelector("text=2 of 3 configurations kept");
  assert.deepEqual(page.errors, []);
  await again.close();
  await page.close();
  await s.stop();
});

test("the run page shows every metric the run recorded as a panel with its unit, one cursor for all", async () => {
  const db = fixture("small", "dashboard.db");
  const s = await serve(db);
  const page = await open(s.url + "#/run/1");
  const recorded = query(db, "SELECT DISTINCT key FROM run_summary WHERE run_id = 1 ORDER BY key").map((r) => r.key);
  await page.waitForFunction((n) => document.querySelectorAll(".panel").length === n, recorded.length, { timeout: 20000 });
  assert.deepEqual((await page.locator(".panel").evaluateAll((ps) => ps.map((p) => p.dataset.key))).sort(), recorded);
  assert.match(await page.locator('.panel[data-key="time_step"] .panel-title').innerText(), /time_step \(seconds\)/);
  // Where it trained, as its resolved run says (a fixture from before the field: the CPU).
  assert.equal(await page.locator(".bar .device").innerText(), "trained on cpu");
  // The train_loss panel's worker 0 line is the database's train_loss of worker 0, step by step.
  const panel = await page.locator('.panel[data-key="train_loss"] .chart').evaluate((box) => ({
    xs: Array.from(box.plot.data[0]), ys: Array.from(box.plot.data[1]), sync: box.plot.cursor.sync?.key }));
  const rows = query(db, "SELECT step, value FROM metrics WHERE run_id = 1 AND key = 'train_loss' AND worker = 0 ORDER BY step");
  assert.deepEqual(panel.xs, rows.map((r) => r.step));
  assert.deepEqual(panel.ys.map((v) => Number(v.toPrecision(9))), rows.map((r) => Number(r.value.toPrecision(9))));
  const syncs = await page.locator(".panel .chart").evaluateAll((boxes) => [...new Set(boxes.map((b) => b.plot.cursor.sync?.key))]);
  assert.deepEqual(syncs, ["run-1"]);
  // A panel's title opens its metric in the big chart.
  await page.click('.panel[data-key="time_step"] .panel-title');
  await page.waitForFunction(() => location.hash.includes("key=time_step"));
  assert.deepEqual(page.errors, []);
  await page.close();
  await s.stop();
});

test("a run with churn marks each change of membership on its curves' step axis, as the database records it", async () => {
  const db = fixture("churn", "churn.db");
  const s = await serve(db);
  const page = await open(s.url + "#/run/1?key=train_loss");
  await page.waitForFunction(() => document.querySelector(".curve .chart")?.dataset.marks, null, { timeout: 20000 });
  const changes = query(db, "SELECT step, worker, value FROM metrics WHERE run_id = 1 AND key = 'member_change' ORDER BY step");
  const members = query(db, "SELECT step, value FROM metrics WHERE run_id = 1 AND key = 'members' ORDER BY step");
  assert.deepEqual(changes.map((c) => [c.step, c.worker, c.value]), [[4, 1, -1], [8, 1, 1]]);
  assert.equal(await page.locator(".curve .chart").getAttribute("data-marks"),
    `4: ${members[0].value} present, 1 left; 8: ${members[1].value} present, 1 joined`);
  // On x = wall time no step marks (the changes are steps).
  await page.goto(s.url + "#/run/1?key=train_loss&x=wall");
  await page.waitForFunction(() => document.querySelector(".curve .chart")?.dataset.chartPoints);
  assert.equal(await page.locator(".curve .chart").getAttribute("data-marks"), null);
  assert.deepEqual(page.errors, []);
  await page.close();
  await s.stop();
});

test("curves take x as the time measured, derived or projected, each named as such", async () => {
  const db = fixture("clocks", "clocks.db");
  const s = await serve(db);
  const xOfPanel = (page, key) => page.locator(`.panel[data-key="${key}"] .chart`).evaluate((box) => ({
    xs: Array.from(box.plot.data[0]), label: box.plot.axes[0].label }));
  // Run 1, process ranks, on x = projected: each train_loss point at the run's projected seconds so far.
  let page = await open(s.url + "#/run/1?x=projected");
  await page.waitForSelector('.panel[data-key="train_loss"] .chart');
  let panel = await xOfPanel(page, "train_loss");
  assert.equal(panel.label, "seconds, projected onto its link");  // short, in a small panel
  const soFar = query(db, "SELECT step, sum(value) OVER (ORDER BY step) AS so_far FROM metrics WHERE run_id = 1 AND " +
                          "key = 'projected_time_step' AND worker = 0 ORDER BY step");
  const round = (v) => Number(v.toPrecision(9));
  assert.deepEqual(panel.xs.map(round), soFar.map((r) => round(r.so_far)));
  const offered = await page.locator(".bar select").nth(1).locator("option").evaluateAll((os) => os.map((o) => [o.value, o.title]));
  assert.deepEqual(offered.map(([v]) => v), ["step", "epoch", "wall", "projected", "bytes"]);
  assert.match(offered.find(([v]) => v === "wall")[1], /, measured$/);
  // Process ranks: a measured and a projected bar per rank, and no note on derived times.
  await page.waitForFunction(() => [...document.querySelectorAll("td")].some((td) => /^worker 0, /.test(td.innerText)));
  assert.deepEqual((await page.locator("table tr td:first-child").allInnerTexts()).filter((t) => /^worker \d/.test(t)),
                   ["worker 0, measured", "worker 0, projected", "worker 1, measured", "worker 1, projected"]);
  assert.equal(await page.locator(".dashboard .clock-note").count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
  // Run 2, thread ranks: its records' time is derived, and says so.
  page = await open(s.url + "#/run/2?x=wall");
  await page.waitForSelector('.panel[data-key="train_loss"] .chart');
  panel = await xOfPanel(page, "train_loss");
  assert.equal(panel.label, "seconds, derived (thread ranks)");
  assert.ok((await page.locator(".dashboard h3").allInnerTexts()).includes("Time per step, derived (thread ranks)"));
  // It says why its derived and projected panels agree, and draws one step bar per rank, derived.
  assert.match(await page.locator(".dashboard .clock-note").innerText(), /derived .* communicate projected onto the run's link/);
  const stepRows = async (p) => (await p.locator("table tr td:first-child").allInnerTexts()).filter((t) => /^(worker|server) \d/.test(t));
  await page.waitForFunction(() => [...document.querySelectorAll("td")].some((td) => /^worker 0, /.test(td.innerText)));
  assert.deepEqual(await stepRows(page), ["worker 0, derived", "worker 1, derived"]);
  // The big chart below names it in full.
  assert.equal(await page.locator(".curve .chart").evaluate((box) => box.plot.axes[0].label),
               "seconds since the run started, derived (thread ranks)");
  await page.close();
  // Both on one chart: the label names the mix.
  page = await open(s.url + "#/compare?runs=1,2&key=train_loss&bands=0&x=wall");
  await page.waitForSelector(".chart");
  const label = await page.locator(".chart").first().evaluate((box) => box.plot.axes[0].label);
  assert.equal(label, "seconds since the run started, measured (thread ranks: derived)");
  assert.deepEqual(page.errors, []);
  await page.close();
  await s.stop();
});

test("the runs page draws the newest runs first, then the whole list", async () => {
  const db = fixture("many", "first.db", 450);
  const s = await serve(db);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // The whole list is held back until the first rows are on screen.
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route((url) => url.pathname === "/api/runs" && !url.search, async (route) => { await held; await route.continue(); });
  await page.goto(s.url + "#/runs");
  await page.waitForSelector('tr[data-id="450"]', { timeout: 15000 });
  assert.match(await page.locator(".bar .muted").first().innerText(), /^the newest 200 of 450 runs \(loading the rest\)$/);
  const newest = query(db, "SELECT id FROM runs ORDER BY id DESC LIMIT 3").map((r) => r.id);
  const drawn = await page.locator("tr[data-id]").evaluateAll((rows) => rows.slice(0, 3).map((r) => Number(r.dataset.id)));
  assert.deepEqual(drawn, newest);
  release();
  await page.waitForFunction(() => document.querySelector(".bar .muted")?.textContent === "450 of 450 runs", null, { timeout: 15000 });
  // The oldest run is in the list now: sorted the other way, it is on top.
  await page.click("th:has-text('id')");
  await page.waitForSelector('tr[data-id="1"]');
  assert.deepEqual(errors, []);
  await page.close();
  await s.stop();
});

test("the runs page keeps id, run, status and the test metric in view, collapses swept columns, shows tags", async () => {
  const db = fixture("small", "pinned.db");
  execFileSync(LACONIC, ["tag", "2", "keep", "--db", db], { timeout: 60000 });
  const s = await serve(db);
  const page = await browser.newPage({ viewport: { width: 700, height: 700 } });  // narrower than the table
  await page.goto(s.url + "#/runs");
  await page.waitForSelector('tr[data-id="2"]');
  const headers = async () => page.locator(".grid th").allInnerTexts();
  assert.ok((await headers()).some((h) => h.startsWith("tags")), "a run has a tag: the tags column is shown");
  assert.match(await page.locator('tr[data-id="2"]').innerText(), /keep/);
  // Scrolled all the way sideways: the pinned cells are still inside the grid's box.
  await page.locator(".grid").evaluate((g) => { g.scrollLeft = g.scrollWidth; });
  await page.waitForTimeout(200);
  const grid = await page.locator(".grid").boundingBox();
  assert.ok(await page.locator(".grid").evaluate((g) => g.scrollLeft > 0), "the table is wider than the page");
  for (const text of ["compressor=topk,ratio=0.01,seed=1", "FINISHED", "0.832"]) {
    const box = await page.locator('tr[data-id="2"] td', { hasText: text }).first().boundingBox();
    assert.ok(box && box.x >= grid.x - 1 && box.x + 10 <= grid.x + grid.width, `${text} out of view: ${JSON.stringify(box)}`);
  }
  // Swept columns collapse into one, and the choice is in the URL.
  assert.ok((await headers()).some((h) => h.startsWith("compressor")));
  await page.click("#swept-toggle");
  assert.ok(!(await headers()).some((h) => h.startsWith("compressor")));
  assert.ok((await headers()).some((h) => h.startsWith("swept")));
  assert.match(await page.locator('tr[data-id="2"]').innerText(), /compressor=topk, compressor.ratio=0.01, seed=1/);
  assert.match(page.url(), /swept=0/);
  await page.close();
  await s.stop();
});

test("?static=1 opens no live stream, says when it has drawn, and chromium --screenshot captures it", async () => {
  const s = await serve(fixture("small", "static.db"));
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const streams = [];
  page.on("request", (r) => { if (r.url().includes("/api/events") || r.url().includes("/api/changes")) streams.push(r.url()); });
  await page.goto(s.url + "?static=1#/experiment/sweep");
  await page.waitForFunction(() => document.body.dataset.ready === "experiment/sweep", null, { timeout: 20000 });
  assert.equal(await page.locator("#live").innerText(), "static: not live");
  // Bytes on a log axis, its ticks in SI units.
  const pareto = page.locator('.chart[data-name="sweep-pareto"]');
  assert.equal(await pareto.getAttribute("data-x-scale"), "log");
  assert.equal(await pareto.getAttribute("data-x-unit"), "B");
  assert.deepEqual(await page.evaluate(async () => {
    const { siText } = await import("/assets/charts.js");
    return [siText(1e7, "B"), siText(2.5e9, "bit/s"), siText(750000, "B"), siText(12, "B"), siText(1e5, "")];
  }), ["10 MB", "2.5 Gbit/s", "750 kB", "12 B", "100 k"]);
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(streams, []);
  await page.close();
  // The capture people script: it returns (no stream keeps it waiting) and is not blank.
  for (const view of ["runs", "run/1", "experiment/sweep"]) {
    const png = path.join(dir, `capture-${view.replaceAll("/", "-")}.png`);
    execFileSync(CHROMIUM, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,900",
      "--virtual-time-budget=10000", `--screenshot=${png}`, s.url + `?static=1#/${view}`], { timeout: 60000, stdio: "ignore" });
    assert.ok(fs.statSync(png).size > 20000, `${view}: ${fs.statSync(png).size} bytes`);  // a blank page is a few kB
  }
  await s.stop();
});

test("a slow or busy client cannot stop the server, and its stop leaves no -wal or -shm", async () => {
  const db = fixture("small", "slow.db");
  assert.ok(!fs.existsSync(db + "-wal") && !fs.existsSync(db + "-shm"));
  const s = await serve(db);
  const port = Number(new URL(s.url).port);
  // 16 connections that send half a request and wait: httplib's 8 threads were all held by them.
  const halfOpen = [];
  for (let i = 0; i < 16; i++) {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.write("GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    halfOpen.push(socket);
  }
  await new Promise((r) => setTimeout(r, 300));
  // Still answered, 20 at once, well before their read timeout (5 s) frees anything.
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => fetch(s.url + "api/runs", { signal: AbortSignal.timeout(3000) })));
  for (const r of answers) assert.equal(r.status, 200);
  const runs = await answers[0].json();
  assert.ok(runs.runs.length > 0);
  for (const socket of halfOpen) socket.destroy();
  const stopped = await s.stop();
  assert.equal(stopped.code, 0);
  assert.ok(!fs.existsSync(db + "-wal"), "-wal left beside the database");
  assert.ok(!fs.existsSync(db + "-shm"), "-shm left beside the database");
});

test("on a database damaged while it serves, the API names the file and the recover command", async () => {
  const db = fixture("series", "damaged.db", 100000);
  const s = await serve(db);
  // The pages of the metric values, past the first tenth of the file, overwritten.
  const size = fs.statSync(db).size;
  const fd = fs.openSync(db, "r+");
  fs.writeSync(fd, Buffer.alloc(size - Math.floor(size / 10), 0x5a), 0, size - Math.floor(size / 10), Math.floor(size / 10));
  fs.closeSync(fd);
  const r = await fetch(s.url + "api/runs/1/series?key=train_loss", { signal: AbortSignal.timeout(10000) });
  assert.equal(r.status, 503);
  const error = (await r.json()).error;
  assert.match(error, /damaged\.db/);
  assert.match(error, /laconic recover --from-damaged .*damaged\.db recovered\.db/);
  assert.doesNotMatch(error, /SELECT/);
  await s.stop();
});

test("a port in use, or a database that does not exist, is refused with a clear message", async () => {
  const db = fixture("small", "port.db");
  const first = await serve(db);
  const port = new URL(first.url).port;
  let out = "";
  try {
    execFileSync(LACONIC, ["ui", "--db", db, "--port", port], { timeout: 20000, stdio: ["ignore", "pipe", "pipe"] });
    assert.fail("a second server started on a port in use");
  } catch (e) {
    out = String(e.stderr);
    assert.equal(e.status, 2);
  }
  assert.match(out, /the port is in use/);
  await first.stop();
  // Nor is a database that does not exist: it never creates one.
  const missing = path.join(dir, "missing.db");
  try {
    execFileSync(LACONIC, ["ui", "--db", missing, "--port", "0"], { timeout: 20000, stdio: ["ignore", "pipe", "pipe"] });
    assert.fail("laconic ui served a database that does not exist");
  } catch (e) {
    assert.notEqual(e.status, 0);
    assert.match(String(e.stderr), /does not exist/);
  }
  assert.equal(fs.existsSync(missing), false);
});
