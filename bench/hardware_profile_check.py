#!/usr/bin/env python3
"""Two tools, one machine: the compute per step that scripts/profile-hardware.py measures on this
CPU (PyTorch, one thread) against the compute laconic itself records for the same model and batch
(time_forward + time_backward + time_optimizer, one worker, one thread), for LeNet-5, the MLP and
ResNet-20. A profile written on a GPU node is only as good as this agreement on the CPU, where
both can run (issue 34: within 10%).

Runs are interleaved (for each repetition: every model, laconic then the script); each side skips
its first WARMUP steps and averages the next STEPS; the figure is the median over repetitions.

usage: bench/hardware_profile_check.py [path/to/laconic] [--repetitions 3] [--steps 40] [--warmup 5]
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE = os.path.join(HERE, "..", "scripts", "profile-hardware.py")
BATCH = 64
MODELS = {  # profile-hardware.py's name: (dataset, laconic model)
    "lenet5": ("fashion_mnist()", "lenet5()"),
    "mlp": ("fashion_mnist()", "mlp()"),
    "resnet20": ("synthetic { shape = {3, 32, 32}, n = 4096, test_n = 64 }", "resnet { depth = 20 }"),
}


def laconic_compute(laconic, directory, model, steps, warmup):
    data, net = MODELS[model]
    path = os.path.join(directory, f"{model}.lua")
    with open(path, "w") as f:
        f.write(f"""experiment {{
  name = "profile-check", data = {data}, model = {net},
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = {BATCH}, epochs = 1, max_steps = {warmup + steps},
  workers = 1, compressor = none(), seeds = {{ 1 }}, eval_limit = 64,
}}
""")
    db = os.path.join(directory, f"{model}.db")
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([laconic, "run", path, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    with sqlite3.connect(db) as c:
        (seconds,) = c.execute(
            "SELECT SUM(value) / COUNT(DISTINCT step) FROM metrics WHERE worker = 0 AND step >= ? AND key IN "
            "('time_forward', 'time_backward', 'time_optimizer')", (warmup,)).fetchone()
    return seconds


def profile_compute(directory, model, steps, warmup):
    out = os.path.join(directory, f"{model}.json")
    subprocess.run(["/usr/bin/python3", PROFILE, "--device", "cpu", "--threads", "1", "--models", model,
                    "--steps", str(steps), "--warmup", str(warmup), "--out", out], check=True,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        m = json.load(f)["models"][0]
    return m["forward"] + m["backward"] + m["optimizer"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("laconic", nargs="?", default="build/cli/laconic")
    p.add_argument("--repetitions", type=int, default=3)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    laconic = os.path.abspath(args.laconic)
    measured = {m: ([], []) for m in MODELS}
    with tempfile.TemporaryDirectory() as directory:
        for r in range(args.repetitions):
            for model in MODELS:
                ours = laconic_compute(laconic, directory, model, args.steps, args.warmup)
                theirs = profile_compute(directory, model, args.steps, args.warmup)
                measured[model][0].append(ours)
                measured[model][1].append(theirs)
                print(f"  repetition {r + 1} {model}: laconic {ours * 1e3:.2f} ms, profile {theirs * 1e3:.2f} ms",
                      file=sys.stderr, flush=True)
    print(f"Compute per step (forward + backward + optimizer), batch {BATCH}, one thread, medians of "
          f"{args.repetitions} interleaved repetitions of {args.steps} steps after {args.warmup}:\n")
    print("| model | laconic (ms) | profile-hardware.py (ms) | profile / laconic | within 10% |")
    print("|---|---:|---:|---:|---|")
    for model, (ours, theirs) in measured.items():
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"| {model} | {a * 1e3:.2f} | {b * 1e3:.2f} | {b / a:.3f} | {'yes' if abs(b / a - 1) <= 0.10 else 'no'} |")


if __name__ == "__main__":
    main()
