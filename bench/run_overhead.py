#!/usr/bin/env python3
"""The per-run overhead of `laconic run`: a LeNet-5 / Fashion-MNIST run of 2 workers and
max_steps = 1, timed from outside (the wall time of the whole command, REPEAT times), with the
breakdown each run records in run_facts (the seconds_* facts, docs/schema.md). Then a sweep of
SWEEP such runs in one `laconic run`, whose runs after the first find the data already read.
Prints medians; the issue-16 target is 1.5 s of wall time for the single run.

The runs use a cache folder of decoded data of their own (LACONIC_CACHE_DIR, docs/models-and-
data.md), empty at first: the first run decodes the gzipped files and stores them, as a first
run on a new machine does; it is timed apart, and the others map the stored files.

usage: bench/run_overhead.py [path/to/laconic] [REPEAT] [SWEEP]
       (defaults: build/cli/laconic 5 5; run from the repository root or anywhere)
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

laconic = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic")
repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
sweep = int(sys.argv[3]) if len(sys.argv) > 3 else 5
TARGET = 1.5

EXPERIMENT = """
experiment {{
  name = "overhead", data = fashion_mnist(), model = lenet5(),
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = 64,
  max_steps = 1, workers = 2, topology = allreduce {{ algorithm = "ring" }},
  schedule = synchronous(), seeds = {seeds},
}}
"""

# (fact, what it measures), in the order a run goes through them.
PHASES = [
    ("controller", "controller: LibTorch loaded, file planned, database opened (wall - the rest)"),
    ("seconds_preload", "controller: dataset read and decoded, once per `laconic run`"),
    ("seconds_process_start", "workers: fork to first message"),
    ("seconds_starting", "workers: experiment file loaded, threads pinned"),
    ("seconds_rendezvous", "workers: Gloo rendezvous"),
    ("seconds_loading", "workers: model built, data found, identical start checked"),
    ("seconds_training", "workers: the training step(s)"),
    ("seconds_evaluating", "workers: test split evaluated (split across the workers)"),
    ("seconds_finishing", "workers: last flush"),
    ("seconds_teardown", "workers: last message to exit"),
]


def facts(db):
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT run_id, key, value FROM run_facts WHERE key LIKE 'seconds_%'").fetchall()
    by_run = {}
    for run, key, value in rows:
        by_run.setdefault(run, {})[key] = float(value)
    return by_run


def run(directory, seeds, name, env):
    path = os.path.join(directory, name + ".lua")
    with open(path, "w") as f:
        f.write(EXPERIMENT.format(seeds=seeds))
    db = os.path.join(directory, name + ".db")
    start = time.monotonic()
    subprocess.run([laconic, "run", path, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL, env=env)
    return time.monotonic() - start, facts(db)


with tempfile.TemporaryDirectory() as directory:
    env = dict(os.environ, LACONIC_CACHE_DIR=os.path.join(directory, "cache"))
    first_wall, first_runs = run(directory, "{ 1 }", "first", env)
    (first,) = first_runs.values()
    walls, phases = [], {}
    for i in range(repeat):
        wall, by_run = run(directory, "{ 1 }", f"single{i}", env)
        (f,) = by_run.values()
        f["controller"] = wall - f.get("seconds_preload", 0) - f["seconds_launch"]
        walls.append(wall)
        for key, _ in PHASES:
            phases.setdefault(key, []).append(f.get(key, 0.0))
    seeds = "{ " + ", ".join(str(s) for s in range(1, sweep + 1)) + " }"
    sweep_wall, sweep_runs = run(directory, seeds, "sweep", env)

print(f"Per-run overhead: LeNet-5 / Fashion-MNIST, 2 workers, max_steps = 1; median of {repeat} runs")
print()
print("| phase | seconds |")
print("|---|---|")
for key, what in PHASES:
    print(f"| {what} | {statistics.median(phases[key]):.3f} |")
median = statistics.median(walls)
print(f"| **wall time of `laconic run`** (min {min(walls):.2f}, max {max(walls):.2f}) | **{median:.3f}** |")
print()
print(f"The first run, with an empty cache of decoded data (it decodes the files and stores them): "
      f"{first_wall:.2f} s wall, of which {first.get('seconds_preload', 0):.2f} s reading and decoding.")
print()
later = [r["seconds_launch"] + r.get("seconds_preload", 0) for run_id, r in sorted(sweep_runs.items())][1:]
print(f"A sweep of {sweep} such runs in one `laconic run`: {sweep_wall:.2f} s wall, "
      f"{sweep_wall / sweep:.2f} s per run; each run after the first: median "
      f"{statistics.median(later):.3f} s from fork to reaped workers (data already in memory).")
print()
print(f"Target (issue 16): a single run in at most {TARGET} s of wall time: "
      + ("met" if median <= TARGET else f"not met ({median:.2f} s)"))
