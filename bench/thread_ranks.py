#!/usr/bin/env python3
"""What 64 ranks placed as threads cost (issue 32): one epoch of LeNet-5 / Fashion-MNIST with
64 thread ranks (placement = threads(), batch 64 each: ~15 steps over the 60,000 images) against
the same epoch with 1 worker (a process, batch 64: ~938 steps over the same images), both on
this host. Each `laconic run` is timed from outside: the CPU time of the whole process tree
(user + sys, wait4's rusage: the controller and its worker) and the peak resident memory of its
largest process (the worker, which holds every rank and shares the decoded data with the
controller). Runs alternate, REPEAT of each; medians.

Targets (issue 32): CPU time at most 1.5x the 1-worker epoch's; memory at most the shared data
plus 64 x (model + optimizer + compressor state) plus a small constant, that is the 1-worker
run's peak plus 63 x one rank's state (weights, gradient, momentum and the trainer's two flat
copies of the model: 5 x 4 bytes per parameter); what is left over is printed as the constant.

usage: bench/thread_ranks.py [path/to/laconic] [REPEAT] [RANKS]
       (defaults: build/cli/laconic 3 64; run from the repository root or anywhere)
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

laconic = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic")
repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
ranks = int(sys.argv[3]) if len(sys.argv) > 3 else 64
CPU_TARGET = 1.5

EXPERIMENT = """
experiment {{
  name = "{name}", data = fashion_mnist(), model = lenet5(),
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = 64, epochs = 1,
  workers = {workers}, placement = {placement}, compressor = none(),
}}
"""


def measure(directory, name, workers, placement):
    path = os.path.join(directory, name + ".lua")
    with open(path, "w") as f:
        f.write(EXPERIMENT.format(name=name, workers=workers, placement=placement))
    db = os.path.join(directory, name + ".db")
    start = time.monotonic()
    child = subprocess.Popen([laconic, "run", path, "--db", db, "--quiet"], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        sys.exit(f"{name}: laconic run failed ({status})")
    with sqlite3.connect(db) as c:
        accuracy, parameters = c.execute(
            "SELECT (SELECT value FROM metrics WHERE key = 'test_accuracy' ORDER BY step DESC LIMIT 1), "
            "(SELECT value FROM metrics WHERE key = 'model_parameters')").fetchone()
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss_mb": usage.ru_maxrss / 1024,
            "accuracy": accuracy, "parameters": parameters}


with tempfile.TemporaryDirectory() as directory:
    one, many = [], []
    for i in range(repeat):  # interleaved: whatever else the machine does disturbs both alike
        one.append(measure(directory, f"one{i}", 1, "processes()"))
        many.append(measure(directory, f"many{i}", ranks, "threads()"))


def median(runs, key):
    return statistics.median(r[key] for r in runs)


print(f"One epoch of LeNet-5 / Fashion-MNIST, batch 64 per rank; medians of {repeat} interleaved runs "
      f"(min-max in brackets)")
print()
print("| placement | ranks | CPU time, user + sys (s) | wall (s) | peak RSS (MB) | test accuracy |")
print("|---|---|---|---|---|---|")
for label, workers, runs in (("processes()", 1, one), ("threads()", ranks, many)):
    cpu = [r["cpu"] for r in runs]
    print(f"| {label} | {workers} | {median(runs, 'cpu'):.2f} [{min(cpu):.2f}-{max(cpu):.2f}] | "
          f"{median(runs, 'wall'):.2f} | {median(runs, 'rss_mb'):.0f} | {median(runs, 'accuracy'):.4f} |")
ratio = median(many, "cpu") / median(one, "cpu")
state_mb = 5 * 4 * one[0]["parameters"] / 2**20
allowed = median(one, "rss_mb") + (ranks - 1) * state_mb
print()
print(f"CPU time: {ratio:.2f}x the 1-worker epoch (target at most {CPU_TARGET}x): "
      + ("met" if ratio <= CPU_TARGET else "not met"))
print(f"Memory: {median(many, 'rss_mb'):.0f} MB against the 1-worker run's {median(one, 'rss_mb'):.0f} MB "
      f"+ {ranks - 1} x {state_mb:.2f} MB of rank state = {allowed:.0f} MB; the constant above it: "
      f"{median(many, 'rss_mb') - allowed:.0f} MB")
