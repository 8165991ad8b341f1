#!/usr/bin/env python3
"""Does a lock on the database stall a sweep between its runs? A sweep of RUNS LeNet-5 /
Fashion-MNIST runs (2 workers, STEPS steps each, timeout = 10) while another process holds the
database's write lock (BEGIN IMMEDIATE) for LOCK seconds from 2 s into the sweep, and the same
sweep undisturbed. Prints, per run: its status, recorded wall time (ended - started) and its
start's distance from the previous run's end; with the lock, the last row count against the
undisturbed sweep's. Issue 49's target: under a 90 s lock, each run starts within 5 s of the
previous one's end, every run FINISHED with the undisturbed sweep's rows.

usage: bench/lock_sweep.py [path/to/laconic] [RUNS] [STEPS] [LOCK]
       (defaults: build/cli/laconic 3 800 90; run from the repository root or anywhere)
"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from db_lock import hold_lock  # noqa: E402

laconic = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 800
lock_seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 90

EXPERIMENT = f"""
experiment {{
  name = "sweep", data = fashion_mnist(), model = lenet5(),
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = 32,
  max_steps = {steps}, workers = 2, timeout = 10,
  seeds = {{ {", ".join(str(s) for s in range(1, runs + 1))} }},
}}
"""


def sweep(directory, name, locked):
    """Runs the sweep; returns the exit status, [(status, started, ended, rows)] and the lock's span."""
    db = os.path.join(directory, name + ".db")
    held = []
    locker = None
    if locked:
        locker = threading.Thread(target=hold_lock, args=(db, time.monotonic() + 2, lock_seconds, held))
        locker.start()
    with open(os.path.join(directory, name + ".log"), "w") as log:
        status = subprocess.run([laconic, "run", "sweep.lua", "--db", db], cwd=directory, stdout=log,
                                stderr=subprocess.STDOUT).returncode
    if locker:
        locker.join()
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = connection.execute(
        "SELECT r.status, r.started, r.ended, (SELECT count(*) FROM metric_values m WHERE m.run_id = r.id) "
        "FROM runs r ORDER BY r.id").fetchall()
    connection.close()
    return status, rows, held


def show(label, status, rows, held):
    print(f"{label}: exit {status}" + (f", lock held {held[1] - held[0]:.0f} s" if len(held) == 2 else ""))
    gaps = []
    for i, (state, started, ended, count) in enumerate(rows):
        gap = "" if i == 0 else f", started {started - rows[i - 1][2]:.2f} s after run {i}'s end"
        if i > 0:
            gaps.append(started - rows[i - 1][2])
        during = ""
        if len(held) == 2 and started < held[1] and ended > held[0]:
            during = " (during the lock)"
        print(f"  run {i + 1}: {state}, wall {ended - started:.1f} s, {count} rows{gap}{during}")
    return gaps


def main():
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "sweep.lua"), "w") as f:
            f.write(EXPERIMENT)
        calm = sweep(directory, "calm", False)
        show("undisturbed", *calm)
        locked = sweep(directory, "locked", True)
        gaps = show(f"with a {lock_seconds:g} s lock", *locked)
        same_rows = [r[3] for r in calm[1]] == [r[3] for r in locked[1]]
        finished = all(r[0] == "FINISHED" for r in locked[1])
        print(f"with the lock: longest gap between runs {max(gaps):.2f} s (target under 5 s); "
              f"every run FINISHED: {'yes' if finished else 'no'}; rows as undisturbed: {'yes' if same_rows else 'no'}")


main()
