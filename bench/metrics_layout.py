#!/usr/bin/env python3
"""Which layout of the metrics table could ingest 500k rows/s? (Schema 3 took the integer key.)
Inserts the same ~1M rows (100 runs x 330 steps x 2 workers x the 15 per-step keys, batches of
2,000 sorted by key as schema 2's storage::SqliteSink wrote them, one transaction each, WAL,
synchronous=NORMAL) into candidate schemas and prints rows/s for each. Python's sqlite3 adds its
own per-row cost, so compare the ratios, not the absolute figures, with bench/storage_bench.sh.
Usage: python3 bench/metrics_layout.py"""
import os
import random
import sqlite3
import time

KEYS = ["train_loss", "time_forward", "time_backward", "time_compress", "time_decompress",
        "time_communicate", "time_optimizer", "lr", "time_step", "bytes_sent", "bytes_received",
        "bytes_dense", "payload_bytes", "projected_time_communicate", "projected_time_step"]
COLUMNS = """run_id INTEGER NOT NULL, key TEXT NOT NULL, step INTEGER NOT NULL, epoch INTEGER NOT NULL,
  worker INTEGER NOT NULL, wall_time REAL, value REAL, seq INTEGER NOT NULL"""
INT_COLUMNS = COLUMNS.replace("key TEXT", "key INTEGER")
LAYOUTS = [
    ("schema 2: rowid table + index (run_id, key, step)",
     f"CREATE TABLE metrics ({COLUMNS}); CREATE INDEX m ON metrics (run_id, key, step);"),
    ("schema 3: integer key (metric_keys), rowid table + index (run_id, key_id, step)",
     f"CREATE TABLE metrics ({INT_COLUMNS}); CREATE INDEX m ON metrics (run_id, key, step);"),
    ("no index (diagnosis only: per-key reads would scan a run)", f"CREATE TABLE metrics ({COLUMNS});"),
    ("WITHOUT ROWID, primary key (run_id, key, step, worker, seq)",
     f"CREATE TABLE metrics ({COLUMNS}, PRIMARY KEY (run_id, key, step, worker, seq)) WITHOUT ROWID;"),
    ("rowid table + index (run_id, step)",
     f"CREATE TABLE metrics ({COLUMNS}); CREATE INDEX m ON metrics (run_id, step);"),
]
INSERT = "INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


def ingest(schema, path="/tmp/laconic-metrics-layout.db", runs=100, steps=330, workers=2):
    integer_keys = "key INTEGER" in schema
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(schema)
    rng = random.Random(1)
    rows, seq, batch = 0, 0, []

    def commit():
        nonlocal rows, batch
        batch.sort(key=lambda r: r[1])
        db.execute("BEGIN")
        db.executemany(INSERT, batch)
        db.execute("COMMIT")
        rows += len(batch)
        batch = []

    start = time.perf_counter()
    for run in range(1, runs + 1):
        for step in range(steps):
            for worker in range(workers):
                for k, key in enumerate(KEYS):
                    seq += 1
                    batch.append((run, k if integer_keys else key, step, 0, worker, 0.5, rng.random(), seq))
                    if len(batch) >= 2000:
                        commit()
        if batch:
            commit()
    seconds = time.perf_counter() - start
    db.close()
    for suffix in ("", "-wal", "-shm"):
        os.remove(path + suffix) if os.path.exists(path + suffix) else None
    return rows, seconds


if __name__ == "__main__":
    for label, schema in LAYOUTS:
        rows, seconds = ingest(schema)
        print(f"{rows / seconds:9.0f} rows/s  {label}")
