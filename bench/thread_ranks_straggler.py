#!/usr/bin/env python3
"""Thread ranks against processes with a straggler, under every topology and schedule whose
dependencies are not one collective per step: 4 workers, the last one delayed 20 ms a step, 40
steps of a small MLP (the experiment tests/cli/placement_cli_test.cpp runs). Prints, per
configuration, the median epoch_time over the workers and the mean time_wait of the three
that are not delayed, for a process per rank (wall clock) and for thread ranks (derived clock),
and their ratio (docs/network-model.md, "Thread ranks").

usage: python3 bench/thread_ranks_straggler.py [path/to/laconic]
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

LACONIC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic")

COMMON = """  data = synthetic { shape = {1, 8, 8}, n = 4096, test_n = 64 },
  model = mlp { sizes = {64, 32, 10} },
  optimizer = sgd { lr = 0.05 },
  batch_size = 16, workers = 4, max_steps = 40, eval_limit = 64, timeout = 60,
  placement = sweep { processes(), threads() },
"""
EXPERIMENTS = {
    "sync": """  topology = sweep { parameter_server { pull = "weights" }, parameter_server { pull = "gradients" },
                     gossip(), allreduce() },
  schedule = synchronous { stragglers = 1, straggler_delay = 0.02 },
""",
    "local": "  schedule = local_sgd { period = 4, stragglers = 1, straggler_delay = 0.02 },\n",
    "ssp": """  topology = parameter_server(),
  schedule = stale_sync { staleness = 2, stragglers = 1, straggler_delay = 0.02 },
""",
}


def main():
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "s.db")
        for name, fields in EXPERIMENTS.items():
            path = os.path.join(work, name + ".lua")
            with open(path, "w") as f:
                f.write('experiment {\n  name = "%s",\n%s%s}\n' % (name, COMMON, fields))
            subprocess.run([LACONIC, "run", path, "--db", db, "--quiet"], check=True, cwd=work,
                           stdout=subprocess.DEVNULL)
        rows = sqlite3.connect(db).execute(
            "SELECT e.name, r.name, m.key, m.worker, avg(m.value) FROM metrics m JOIN runs r ON r.id = m.run_id "
            "JOIN experiments e ON e.id = r.experiment_id WHERE m.key IN ('epoch_time', 'time_wait') AND m.worker < 4 "
            "GROUP BY r.id, m.key, m.worker").fetchall()
    runs = {}
    for experiment, run, key, worker, value in rows:
        placement = "threads" if "placement=threads" in run else "processes"
        config = experiment + ": " + (run.replace("placement=" + placement, "").replace(",seed=1", "").strip(",")
                                      or "(default topology)")
        runs.setdefault(config, {}).setdefault(placement, {}).setdefault(key, {})[worker] = value
    print("| configuration | epoch_time, processes (s) | epoch_time, threads (s) | threads / processes "
          "| wait per step, processes (ms) | wait per step, threads (ms) |")
    print("|---|---|---|---|---|---|")
    for config, by in sorted(runs.items()):
        epoch = {p: statistics.median(by[p]["epoch_time"].values()) for p in by}
        wait = {p: (1e3 * statistics.mean(by[p]["time_wait"][w] for w in range(3))
                    if "time_wait" in by[p] else None) for p in by}
        text = {p: "-" if wait[p] is None else "%.1f" % wait[p] for p in by}
        print("| %s | %.3f | %.3f | %.2f | %s | %s |" % (config, epoch["processes"], epoch["threads"],
                                                         epoch["threads"] / epoch["processes"],
                                                         text["processes"], text["threads"]))


main()
