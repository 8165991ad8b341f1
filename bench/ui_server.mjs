// `laconic ui` for the UI benchmarks (ui_bench, ui_scale, ui_load): started on a free port, its
// URL read from what it prints; stop() sends SIGINT and resolves once it has exited.
import { spawn } from "node:child_process";
import path from "node:path";

export function serve(laconic, db) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.resolve(laconic), ["ui", "--db", db, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/(http:\/\/127\.0\.0\.1:(\d+)\/)/);
      if (m) resolve({ url: m[1], port: Number(m[2]), child,
                       stop: () => new Promise((r) => { if (child.exitCode !== null) r(); child.on("exit", r); child.kill("SIGINT"); }) });
    });
    child.on("exit", (code) => reject(new Error(`laconic ui exited ${code}`)));
  });
}
