#!/usr/bin/env python3
"""Does a lock on the database slow training? A LeNet-5 / Fashion-MNIST run of 2 workers and
STEPS steps with timeout = 10, REPEAT times undisturbed and REPEAT times while another process
holds the database's write lock (BEGIN IMMEDIATE) for LOCK seconds from 2 s into the run,
interleaved. Prints each run's seconds_training (rank 0's training loop, run_facts) and the
medians; issue 30's target: training with the lock within 10% of without, every run FINISHED.

usage: bench/lock_stall.py [path/to/laconic] [REPEAT] [STEPS] [LOCK]
       (defaults: build/cli/laconic 3 1500 20; run from the repository root or anywhere)
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from db_lock import hold_lock  # noqa: E402

laconic = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic")
repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 1500
lock_seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 20

EXPERIMENT = f"""
experiment {{
  name = "lock", data = fashion_mnist(), model = lenet5(),
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = 32,
  max_steps = {steps}, workers = 2, timeout = 10,
}}
"""


def one_run(directory, name, locked):
    db = os.path.join(directory, name + ".db")
    started = time.monotonic()
    locker = None
    if locked:
        locker = threading.Thread(target=hold_lock, args=(db, started + 2, lock_seconds))
        locker.start()
    with open(os.path.join(directory, name + ".log"), "w") as log:
        status = subprocess.run([laconic, "run", "lock.lua", "--db", db], cwd=directory, stdout=log,
                                stderr=subprocess.STDOUT).returncode
    if locker:
        locker.join()
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    state, = connection.execute("SELECT status FROM runs").fetchone()
    training, = connection.execute("SELECT value FROM run_facts WHERE key = 'seconds_training'").fetchone()
    connection.close()
    return status, state, float(training)


def main():
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "lock.lua"), "w") as f:
            f.write(EXPERIMENT)
        results = {False: [], True: []}
        for i in range(repeat):
            for locked in (False, True):
                status, state, training = one_run(directory, f"{'locked' if locked else 'calm'}-{i}", locked)
                results[locked].append(training)
                print(f"{'locked' if locked else 'calm  '} {i}: exit {status}, {state}, training {training:.2f} s",
                      flush=True)
        calm, locked = statistics.median(results[False]), statistics.median(results[True])
        print(f"median training: calm {calm:.2f} s, with a {lock_seconds:g} s lock {locked:.2f} s "
              f"({100 * (locked - calm) / calm:+.1f}%; target within +10%)")


main()
