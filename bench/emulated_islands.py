#!/usr/bin/env python3
"""The islands model checked against emulated islands: runs experiments/islands-emulated.lua (2 x 2
ranks, a bridge per island, each island's link to the others shaped to 20 or 100 Mbit/s; root)
and prints, per link between and allreduce, the medians over steps 3.. (TCP's windows grow over the
first steps) of every rank's measured
exchange (time_communicate) and of its projection (projected_time_communicate), and their ratio.
Runs of one configuration's seeds are pooled; the file's seeds interleave nothing, so run it
twice on a noisy machine and compare.

usage: bench/emulated_islands.py [path/to/laconic]   (default build/cli/laconic; about 1 minute)
"""
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

laconic = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic")
experiment = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments", "islands-emulated.lua")
with tempfile.TemporaryDirectory() as work:
    db = os.path.join(work, "islands.db")
    with open(os.path.join(work, "run.log"), "w") as log:
        subprocess.run([laconic, "run", experiment, "--db", db], check=True, stdout=log, stderr=subprocess.STDOUT)
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT r.config, m.key, m.value FROM metrics m JOIN runs r ON r.id = m.run_id "
        "WHERE m.key IN ('time_communicate', 'projected_time_communicate') AND m.step >= 3").fetchall()

values = {}
for config, key, value in rows:
    c = json.loads(config)
    between = c["network"]["between"]["bandwidth"]
    algorithm = c["topology"]["algorithm"]
    values.setdefault((between, algorithm), {}).setdefault(key, []).append(value)

print(f"{'between':>8} {'allreduce':>13} {'emulated ms':>12} {'projected ms':>13} {'emulated/projected':>19}")
for (between, algorithm), by_key in sorted(values.items()):
    emulated = statistics.median(by_key["time_communicate"]) * 1e3
    projected = statistics.median(by_key["projected_time_communicate"]) * 1e3
    print(f"{between:>8} {algorithm:>13} {emulated:12.1f} {projected:13.1f} {emulated / projected:19.2f}")
