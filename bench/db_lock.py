"""Another process's write lock on a laconic database, for the lock benchmarks
(bench/lock_stall.py, bench/lock_sweep.py)."""
import os
import sqlite3
import time


def hold_lock(path, start, seconds, held=None):
    """Takes the write lock of `path` (BEGIN IMMEDIATE) at `start` (time.monotonic), once the file
    exists, and keeps it `seconds`; appends to `held` the unix times it was taken and let go."""
    time.sleep(max(0.0, start - time.monotonic()))
    while not os.path.exists(path):
        time.sleep(0.05)
    db = sqlite3.connect(path, timeout=10, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    if held is not None:
        held.append(time.time())
    time.sleep(seconds)
    db.execute("ROLLBACK")
    db.close()
    if held is not None:
        held.append(time.time())
