// `laconic ui` at ten times the scale (issue 50's goals): the runs page with RUNS runs (100,000),
// its first paint on a server just started and on one that has answered once (from the page's
// request until its first rows are on screen; goal 1.5 s), the whole list there, a filter applied (the status menu: from the
// change until the rows are drawn again; goal 100 ms), and the run page's dashboard of twelve
// panels of POINTS points each (100,000; from the request until every panel is drawn; goal 1 s).
// Databases from tests/ui/ui_fixtures.cpp; Debian's chromium through playwright-core.
//
// usage: node bench/ui_scale.mjs build/cli/laconic build/tests/ui/ui_fixtures build/ui/npm/node_modules [REPEAT] [RUNS] [POINTS]
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serve } from "./ui_server.mjs";

const [laconic, fixtures, modules, repeatArg, runsArg, pointsArg] = process.argv.slice(2);
if (!modules) {
  console.error("usage: node bench/ui_scale.mjs LACONIC UI_FIXTURES NODE_MODULES [REPEAT=3] [RUNS=100000] [POINTS=100000]");
  process.exit(2);
}
const repeat = Number(repeatArg || 3), runs = Number(runsArg || 100000), points = Number(pointsArg || 100000);
const { chromium } = createRequire(path.join(path.resolve(modules), "noop.js"))("playwright-core");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "laconic-ui-scale-"));
const deadline = setTimeout(() => { console.error("ui_scale: gave up after 20 minutes"); process.exit(1); }, 20 * 60 * 1000);

const serveDb = (db) => serve(laconic, db);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const row = (what, xs, goal) =>
  `| ${what} | ${median(xs).toFixed(0)} ms | ${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)} ms | ${goal} |`;

const many = path.join(dir, "many.db");
execFileSync(path.resolve(fixtures), ["many", many, String(runs)], { timeout: 600000 });
const wide = path.join(dir, "wide.db");
execFileSync(path.resolve(fixtures), ["dashboard", wide, String(points)], { timeout: 600000 });
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });

// The first rows on screen (the newest runs, drawn before the whole list has come), then the
// whole list (the count no longer says it is loading the rest).
async function paint(url) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const start = Date.now();
  await page.goto(url + "#/runs");
  await page.waitForSelector("tr[data-id]", { timeout: 120000 });
  const ms = Date.now() - start;
  await page.waitForFunction(() => /^\d+ of \d+ runs$/.test(document.querySelector(".bar .muted")?.textContent ?? ""),
                             null, { timeout: 120000 });
  return { page, ms, whole: Date.now() - start };
}

const cold = [], warm = [], wholes = [], filters = [];
for (let i = 0; i < repeat; i++) {
  const server = await serveDb(many);  // a server just started: nothing built yet
  const first = await paint(server.url);
  cold.push(first.ms);
  await first.page.close();
  const second = await paint(server.url);
  warm.push(second.ms);
  wholes.push(second.whole);
  // The status menu to FINISHED and back: from the change until the rows are drawn again.
  for (const status of ["FINISHED", ""]) {
    filters.push(await second.page.evaluate(async (value) => {
      const select = document.querySelector("select");
      const start = performance.now();
      select.value = value;
      select.dispatchEvent(new Event("change"));
      await new Promise((r) => requestAnimationFrame(() => r()));
      return performance.now() - start;
    }, status));
  }
  await second.page.close();
  await server.stop();
}

const dashboards = [];
const wideServer = await serveDb(wide);
for (let i = 0; i < repeat; i++) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const start = Date.now();
  await page.goto(wideServer.url + "#/run/1");
  await page.waitForFunction(() => document.querySelectorAll(".panel .chart").length === 12, null, { timeout: 120000 });
  dashboards.push(Date.now() - start);
  await page.close();
}
await wideServer.stop();
await browser.close();
fs.rmSync(dir, { recursive: true, force: true });
clearTimeout(deadline);

console.log(`laconic ui at scale: ${runs} runs, 12 panels of ${points} points; medians of ${repeat}`);
console.log("");
console.log("| what | median | range | goal |");
console.log("|---|---|---|---|");
console.log(row(`first paint of the runs page, ${runs} runs, server just started`, cold, "under 1500 ms"));
console.log(row(`first paint of the runs page, ${runs} runs, server warm`, warm, "under 1500 ms"));
console.log(row(`the whole list of ${runs} runs on the page, server warm (what a filter or sort works on)`, wholes, "-"));
console.log(row(`a status filter applied to the ${runs} runs (until the rows are drawn again)`, filters, "under 100 ms"));
console.log(row(`the run page's 12 panels of ${points} points each drawn`, dashboards, "under 1000 ms"));
