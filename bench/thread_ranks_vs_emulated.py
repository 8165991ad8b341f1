#!/usr/bin/env python3
"""Thread ranks' derived step time checked against a process per rank on an emulated link
(issue 32): LeNet-5 / Fashion-MNIST, dense (`none`) and `topk { ratio = 0.01 }`, 2 and 4
workers, on links of 1 Gbit/s and 100 Mbit/s (latency 50 us). Each configuration runs twice:
with a process per rank on the emulated link (network = link { ..., emulate = true }: veth pairs
shaped with tc tbf; its step is measured on the wall clock) and with every rank a thread
(placement = threads(); its step is its thread's CPU time for compute and compress, its wait
derived from the slowest rank's compute, its communication projected onto the same link, with
the host terms calibrated in docs/network-model.md, "The model against the emulation"). Needs
root (the links are real namespaces).

Prints the median time_step of worker 0 over the steps after the first 3, for both, and their
ratio (target: within 15%), with the parts: compute (forward + backward + optimizer), wait,
communicate. With 4 workers on a 2-core host the processes take turns on the cores, so their
measured compute is inflated by the wait for a core; the table shows it.

usage: bench/thread_ranks_vs_emulated.py [path/to/laconic] [STEPS]
       (defaults: build/cli/laconic 30; about 20 seconds here)
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

laconic = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
SKIP = 3
TARGET = 0.15
# The host's own cost of a message and its rate through the veth pair and bridge, as
# bench/emulated_vs_projected.py calibrates them (docs/network-model.md).
HOST_TERMS = 'overhead = "340us", host_bandwidth = "5.6Gbit"'

EXPERIMENT = """
experiment {{
  name = "{name}", data = fashion_mnist(), model = lenet5(),
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = 64, epochs = 1, max_steps = {steps},
  workers = {workers}, eval_limit = 256, compressor = {compressor}, placement = {placement},
  topology = allreduce {{ algorithm = "ring" }},
  network = link {{ bandwidth = "{link}", latency = "50us", {link_fields} }},
}}
"""

PARTS = {
    "compute": ("time_forward", "time_backward", "time_optimizer"),
    "wait": ("time_wait",),
    "communicate": ("time_communicate",),
    "step": ("time_step",),
}


def medians(db):
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT key, step, value FROM metrics WHERE worker = 0 AND step >= ?", (SKIP,)).fetchall()
    by_step = {}
    for key, step, value in rows:
        by_step.setdefault(step, {})[key] = value
    return {part: statistics.median(sum(v.get(k, 0.0) for k in keys) for v in by_step.values())
            for part, keys in PARTS.items()}


def run(directory, name, **fields):
    path = os.path.join(directory, name + ".lua")
    with open(path, "w") as f:
        f.write(EXPERIMENT.format(name=name, steps=steps, **fields))
    db = os.path.join(directory, name + ".db")
    subprocess.run([laconic, "run", path, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    return medians(db)


rows = []
with tempfile.TemporaryDirectory() as directory:
    for workers in (2, 4):
        for compressor in ("none()", "topk { ratio = 0.01 }"):
            for link in ("1Gbit", "100Mbit"):
                tag = f"{workers}-{compressor[:4]}-{link}"
                emulated = run(directory, "p" + tag, workers=workers, compressor=compressor, link=link,
                               placement="processes()", link_fields="emulate = true")
                threads = run(directory, "t" + tag, workers=workers, compressor=compressor, link=link,
                              placement="threads()", link_fields=HOST_TERMS)
                rows.append((workers, compressor, link, emulated, threads))


def ms(seconds):
    return f"{1000 * seconds:.2f}"


print(f"LeNet-5 / Fashion-MNIST, batch 64, median over steps {SKIP}-{steps - 1} of worker 0 (ms per step)")
print()
print("| workers | compressor | link | processes, emulated: step (compute / wait / communicate) | "
      "threads, derived: step (compute / wait / communicate) | threads / processes |")
print("|---|---|---|---|---|---|")
within = 0
for workers, compressor, link, p, t in rows:
    ratio = t["step"] / p["step"]
    within += abs(ratio - 1) <= TARGET
    print(f"| {workers} | `{compressor}` | {link} | {ms(p['step'])} ({ms(p['compute'])} / {ms(p['wait'])} / "
          f"{ms(p['communicate'])}) | {ms(t['step'])} ({ms(t['compute'])} / {ms(t['wait'])} / "
          f"{ms(t['communicate'])}) | {ratio:.2f} |")
print()
print(f"{within} of {len(rows)} within {TARGET:.0%} (the issue's target)")
