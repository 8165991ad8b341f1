// `laconic ui` under a slow or busy client (issue 49's goal): while HALF_OPEN connections that sent
// half a request stay open and CLIENTS clients each fetch the runs page's data (/api/runs) again
// and again, how long a request takes. Prints the median and p99 of the clients' requests, those
// of a lone probe that asks every 50 ms meanwhile (from a thread of its own), and how many failed. Loopback only;
// every wait bounded (a request gives up after 20 s, the whole run after DURATION + 30 s).
// Database: tests/ui/ui_fixtures.cpp's "many" sweep of RUNS runs.
//
// usage: node bench/ui_load.mjs build/cli/laconic build/tests/ui/ui_fixtures [CLIENTS] [HALF_OPEN] [DURATION_S] [RUNS]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { serve } from "./ui_server.mjs";
import { Worker } from "node:worker_threads";

const [laconic, fixtures, clientsArg, halfOpenArg, durationArg, runsArg] = process.argv.slice(2);
if (!fixtures) {
  console.error("usage: node bench/ui_load.mjs LACONIC UI_FIXTURES [CLIENTS=200] [HALF_OPEN=50] [DURATION_S=20] [RUNS=1000]");
  process.exit(2);
}
const clients = Number(clientsArg || 200);
const halfOpen = Number(halfOpenArg || 50);
const duration = Number(durationArg || 20) * 1000;
const runs = Number(runsArg || 1000);
const deadline = setTimeout(() => {
  console.error("ui_load: gave up after the duration + 30 s");
  process.exit(1);
}, duration + 30000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "laconic-ui-load-"));
const db = path.join(dir, "many.db");
execFileSync(path.resolve(fixtures), ["many", db, String(runs)]);

const server = await serve(laconic, db);

// One GET of /api/runs on `agent`: its latency in ms, or null when it failed or took over 20 s.
function fetchRuns(agent) {
  const start = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port: server.port, path: "/api/runs", agent, timeout: 20000 }, (res) => {
      res.on("data", () => {});
      res.on("end", () => resolve(res.statusCode === 200 ? performance.now() - start : null));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(null));
  });
}

const quantile = (xs, q) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

// Half-open connections: a request line and a header, never the blank line that ends them.
const sockets = [];
for (let i = 0; i < halfOpen; i++) {
  const s = net.connect(server.port, "127.0.0.1");
  s.on("error", () => {});
  s.write("GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  sockets.push(s);
}
await new Promise((r) => setTimeout(r, 200));

const end = performance.now() + duration;
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
const latencies = [];
let failures = 0;
const loops = Array.from({ length: clients }, async () => {
  while (performance.now() < end) {
    const ms = await fetchRuns(agent);
    if (ms === null) failures++;
    else latencies.push(ms);
  }
});
// The probe asks from a thread of its own, so that the clients' work in this one does not delay it.
const probeThread = new Worker(
  `const http = require("node:http");
   const { parentPort, workerData } = require("node:worker_threads");
   const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
   const once = () => new Promise((resolve) => {
     const start = performance.now();
     const req = http.get({ host: "127.0.0.1", port: workerData.port, path: "/api/runs", agent, timeout: 20000 }, (res) => {
       res.on("data", () => {});
       res.on("end", () => resolve(res.statusCode === 200 ? performance.now() - start : null));
     });
     req.on("timeout", () => req.destroy());
     req.on("error", () => resolve(null));
   });
   (async () => {
     const out = [];
     let failed = 0;
     const end = Date.now() + workerData.duration;
     while (Date.now() < end) {
       const ms = await once();
       if (ms === null) failed++; else out.push(ms);
       await new Promise((r) => setTimeout(r, 50));
     }
     agent.destroy();
     parentPort.postMessage({ out, failed });
   })();`,
  { eval: true, workerData: { port: server.port, duration } });
const prober = new Promise((resolve) => probeThread.on("message", resolve));
const [, { out: probe, failed: probeFailures }] = await Promise.all([Promise.all(loops), prober]);
agent.destroy();
for (const s of sockets) s.destroy();
await server.stop();
const leftover = ["-wal", "-shm"].filter((suffix) => fs.existsSync(db + suffix));
fs.rmSync(dir, { recursive: true, force: true });
clearTimeout(deadline);

const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : "-");
console.log(`ui_load: ${runs} runs, ${clients} clients, ${halfOpen} half-open connections, ${duration / 1000} s`);
console.log(`  clients: ${latencies.length} requests, median ${f(quantile(latencies, 0.5))} ms, p99 ${f(quantile(latencies, 0.99))} ms, ${failures} failed`);
console.log(`  probe:   ${probe.length} requests, median ${f(quantile(probe, 0.5))} ms, p99 ${f(quantile(probe, 0.99))} ms, ${probeFailures} failed`);
console.log(`  left beside the database after the stop: ${leftover.length ? leftover.join(", ") : "nothing"}`);
