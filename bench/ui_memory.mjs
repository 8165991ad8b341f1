// `laconic ui`'s memory under repeated `GET /api/runs/ID` (issue 62: "memory grows with requests,
// 40-90 kB per 1,000"): ROUNDS rounds of 1,000 requests each, CLIENTS at a time on connections
// that close after each request (a new connection, so a new server thread, every time), the IDs
// cycling over the database's runs and one that does not exist. Prints the server's resident
// memory (VmRSS, from /proc) after each round and the growth per 1,000 requests over the last
// half of the rounds, where a leak keeps growing and a warm allocator does not. Linux only
// (reads /proc/PID/status); loopback only; every request gives up after 20 s.
// Database: tests/ui/ui_fixtures.cpp's "many" sweep of RUNS runs.
//
// usage: node bench/ui_memory.mjs build/cli/laconic build/tests/ui/ui_fixtures [ROUNDS] [CLIENTS] [RUNS]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { serve } from "./ui_server.mjs";

const [laconic, fixtures, roundsArg, clientsArg, runsArg] = process.argv.slice(2);
if (!fixtures) {
  console.error("usage: node bench/ui_memory.mjs LACONIC UI_FIXTURES [ROUNDS=20] [CLIENTS=4] [RUNS=100]");
  process.exit(2);
}
const rounds = Number(roundsArg || 20);
const clients = Number(clientsArg || 4);
const runs = Number(runsArg || 100);
const perRound = 1000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "laconic-ui-memory-"));
const db = path.join(dir, "many.db");
execFileSync(path.resolve(fixtures), ["many", db, String(runs)]);
const server = await serve(laconic, db);

const rssKiB = () => {
  const status = fs.readFileSync(`/proc/${server.child.pid}/status`, "utf8");
  return Number(status.match(/VmRSS:\s+(\d+)/)[1]);
};

// One GET on a connection of its own; resolves with the status code (0 when it failed).
function get(id) {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port: server.port, path: `/api/runs/${id}`,
                           agent: false, headers: { Connection: "close" }, timeout: 20000 }, (res) => {
      res.on("data", () => {});
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
  });
}

let failed = 0;
let next = 0;
const samples = [rssKiB()];
console.log(`laconic ui over ${runs} runs, ${clients} clients, ${perRound} requests a round`);
console.log(`round 0: VmRSS ${samples[0]} KiB`);
for (let round = 1; round <= rounds; round++) {
  const end = next + perRound;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < end) {
      const id = next++ % (runs + 1) + 1;  // runs + 1: one ID past the last, answered 404
      const code = await get(id);
      if (code !== 200 && !(id === runs + 1 && code === 404)) failed++;
    }
  }));
  samples.push(rssKiB());
  console.log(`round ${round}: VmRSS ${samples[round]} KiB`);
}
await server.stop();
fs.rmSync(dir, { recursive: true, force: true });

const half = Math.floor(rounds / 2);
const growth = (samples[rounds] - samples[half]) / (rounds - half);
console.log(`growth over rounds ${half}-${rounds}: ${growth.toFixed(1)} KiB per 1,000 requests; ` +
            `first round ${samples[1] - samples[0]} KiB; failed requests: ${failed}`);
process.exit(failed === 0 ? 0 : 1);
