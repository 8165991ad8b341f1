// What `laconic ui` costs (issue 33's goals): the first paint of the runs page with 10,000 runs
// (from the page's request until its rows are on screen; goal under 1.5 s on the 2-core
// machine), the latency of a run's curve of 100,000 points (50 requests, p50; goal under 50 ms),
// and the page's JavaScript heap after both. Databases from tests/ui/ui_fixtures.cpp; Debian's
// chromium through playwright-core, as the tests drive it.
//
// usage: node bench/ui_bench.mjs build/cli/laconic build/tests/ui/ui_fixtures build/ui/npm/node_modules [REPEAT]
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serve } from "./ui_server.mjs";

const [laconic, fixtures, modules, repeatArg] = process.argv.slice(2);
if (!modules) {
  console.error("usage: node bench/ui_bench.mjs LACONIC UI_FIXTURES NODE_MODULES [REPEAT]");
  process.exit(2);
}
const repeat = Number(repeatArg || 5);
const { chromium } = createRequire(path.join(path.resolve(modules), "noop.js"))("playwright-core");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "laconic-ui-bench-"));

const serveDb = (db) => serve(laconic, db);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const many = path.join(dir, "many.db");
execFileSync(path.resolve(fixtures), ["many", many, "10000"]);
const series = path.join(dir, "series.db");
execFileSync(path.resolve(fixtures), ["series", series, "100000"]);

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
const manyServer = await serveDb(many);
const paints = [];
let heap = 0;
for (let i = 0; i < repeat; i++) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const start = Date.now();
  await page.goto(manyServer.url + "#/runs");
  await page.waitForSelector("tr[data-id]");
  paints.push(Date.now() - start);
  const client = await page.context().newCDPSession(page);
  await client.send("Performance.enable");
  const metrics = (await client.send("Performance.getMetrics").catch(() => ({ metrics: [] }))).metrics;
  heap = metrics.find((m) => m.name === "JSHeapUsedSize")?.value || heap;
  await page.close();
}
manyServer.stop();

const seriesServer = await serveDb(series);
const latencies = [];
for (let i = 0; i < 50; i++) {
  const start = performance.now();
  const body = await (await fetch(seriesServer.url + "api/runs/1/series?key=train_loss&points=1200")).json();
  latencies.push(performance.now() - start);
  if (body.total !== 100000) throw new Error(`expected 100000 points, got ${body.total}`);
}
seriesServer.stop();
await browser.close();
fs.rmSync(dir, { recursive: true, force: true });

console.log(`laconic ui: medians over ${repeat} page loads and 50 requests`);
console.log("");
console.log("| what | median | range | goal |");
console.log("|---|---|---|---|");
console.log(`| first paint of the runs page, 10,000 runs | ${median(paints)} ms | ${Math.min(...paints)}-${Math.max(...paints)} ms | under 1500 ms |`);
console.log(`| a run's curve of 100,000 points (downsampled to at most 2,400) | ${median(latencies).toFixed(1)} ms | ${Math.min(...latencies).toFixed(1)}-${Math.max(...latencies).toFixed(1)} ms | p50 under 50 ms |`);
console.log(`| the page's JavaScript heap with 10,000 runs | ${(heap / 2 ** 20).toFixed(1)} MB | | |`);
